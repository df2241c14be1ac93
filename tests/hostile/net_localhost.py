# expect: AC
# The test runs a TCP listener on the host's 127.0.0.1 and passes its port in
# GRADELINE_TEST_PORT -- which the sandbox does not pass on (clean env), so try
# the ports a listener is likely on; the host's loopback is not our loopback anyway.
# A connect to a port in the ephemeral range can meet itself (TCP simultaneous open:
# the kernel picked the destination port as the source, about 1 in 25,000 tries here),
# so only a peer other than ourselves counts.
import socket
ports = [int(x) for x in open("/proc/self/cmdline").read().split("\0") if x.isdigit()]
for port in ports + list(range(40000, 40050)):
    s = socket.socket()
    s.settimeout(0.2)
    try:
        s.connect(("127.0.0.1", port))
        if s.getpeername() == s.getsockname():
            continue
        print("PWNED: reached a listener on port", port)
        raise SystemExit(0)
    except OSError:
        pass
    finally:
        s.close()
print(3)
