#!/bin/sh
# The CUDA assignment's image: the grading image plus nvcc (PyPI's nvidia-cuda-nvcc
# 13.x holds the whole compiler: cudafe++, ptxas, nvlink, libnvvm, the runtime) on the
# PATH. Run once, as root, with the network, when the image is built.
set -e
apt-get install -y -qq --no-install-recommends python3-pip >/dev/null
pip install -q --no-cache-dir 'nvidia-cuda-nvcc>=13,<14'
cu=$(python3 -c 'import nvidia, os; print(os.path.join(nvidia.__path__[0], "cu13"))')
# a wrapper, not a link: nvcc finds its headers and libraries beside the path it was
# started by (nvcc.profile's $(_HERE_))
printf '#!/bin/sh\nexec %s/bin/nvcc "$@"\n' "$cu" > /usr/local/bin/nvcc
chmod 755 /usr/local/bin/nvcc
nvcc --version | tail -2
