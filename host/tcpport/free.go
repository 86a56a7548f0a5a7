// Package tcpport hands out and closes the loopback TCP ports of the
// servers tierbench starts: ports free now, for a server to be told
// (Free, FreeN), and nftables tables that close a server's ports to every
// local user but root and the server's own (Lock): how a server without
// authentication of its own (OpenSearch without its security plugin,
// Elasticsearch OSS) is kept from other local users. It imports nothing of
// tierbench's, so the engines' kit and the tiers' ledger, which records
// each lock for cleanup, both stand on it.
package tcpport

import (
	"fmt"
	"net"
)

// Free returns a TCP port on 127.0.0.1 that is free now.
func Free() (int, error) {
	ports, err := FreeN(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

// FreeN returns n distinct TCP ports on 127.0.0.1 that are free now.
// It holds each port open until it has them all: the kernel may hand a
// port it just freed to the next bind, and two servers told the same port
// fail as if someone else had it.
func FreeN(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
