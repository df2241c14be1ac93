# expect: AC
# UDP connect() only looks up a route: no packet is sent even if it succeeds.
# TEST-NET-1 (192.0.2.0/24, RFC 5737) is reserved for documentation.
import socket
ifaces = [l.split(":")[0].strip() for l in open("/proc/net/dev").readlines()[2:]]
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect(("192.0.2.1", 53))
    print("PWNED: a route to the outside exists", s.getsockname())
except OSError:
    try:
        socket.getaddrinfo("deb.debian.org", 80)
        print("PWNED: DNS works")
    except OSError:
        print(3 if ifaces == ["lo"] else f"PWNED: interfaces {ifaces}")
