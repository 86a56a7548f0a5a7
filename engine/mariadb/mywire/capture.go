package mywire

import (
	"context"
	"database/sql/driver"
	"encoding/binary"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Capabilities the handshake may agree that decide how replies are framed
// (MySQL's client/server protocol; MariaDB's extended flags are the upper
// 32 bits, sent in the handshake response's filler).
const (
	capMySQL        = 1 // CLIENT_MYSQL: unset, the extended flags follow
	capCompress     = 0x20
	capProtocol41   = 0x200
	capSSL          = 0x800
	capDeprecateEOF = 0x01000000
	extCacheMeta    = 1 << 4 // MARIADB_CLIENT_CACHE_METADATA
)

// captured is a connection go-sql-driver dialled through Dial: the socket,
// and the capabilities it sent in its handshake response, which are the
// ones client and server agreed.
type captured struct {
	net.Conn
	done  atomic.Bool // the handshake response was seen: Write only writes
	mu    sync.Mutex
	caps  uint32
	ext   uint32
	owner driver.Conn // set by connector once the connect succeeded
}

// Write notes the capabilities of the first packet the client writes (its
// handshake response, or a TLS request) and writes it on.
func (c *captured) Write(b []byte) (int, error) {
	if c.done.Load() {
		return c.Conn.Write(b)
	}
	c.mu.Lock()
	if !c.done.Load() && len(b) >= 8 {
		c.done.Store(true)
		c.caps = binary.LittleEndian.Uint32(b[4:])
		if c.caps&capMySQL == 0 && len(b) >= 4+36 {
			c.ext = binary.LittleEndian.Uint32(b[4+32:])
		}
	}
	c.mu.Unlock()
	return c.Conn.Write(b)
}

// SyscallConn keeps the driver's liveness check of idle connections, which
// looks for it.
func (c *captured) SyscallConn() (syscall.RawConn, error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return nil, errNoDescriptor
	}
	return sc.SyscallConn()
}

// Close forgets the connection and closes the socket.
func (c *captured) Close() error {
	c.mu.Lock()
	owner := c.owner
	c.mu.Unlock()
	if owner != nil {
		conns.Delete(owner)
	}
	return c.Conn.Close()
}

// plain reports whether the bytes on the socket are the protocol's own.
func (c *captured) plain() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.done.Load() && c.caps&capProtocol41 != 0 && c.caps&(capSSL|capCompress) == 0
}

// conns maps go-sql-driver's connections to what Dial captured.
var conns sync.Map // driver.Conn -> *captured

type boxKey struct{}

// box carries Dial's connection back to the connector's Connect.
type box struct{ c *captured }

// Dial is a go-sql-driver DialFunc (mysql.Config.DialFunc) for TCP and
// unix sockets that keeps the socket for Take. Behind Connector only.
func Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	nc, err := (&net.Dialer{KeepAlive: 15 * time.Second}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	b, ok := ctx.Value(boxKey{}).(*box)
	if !ok {
		return nc, nil
	}
	b.c = &captured{Conn: nc}
	return b.c, nil
}

// Connector wraps go-sql-driver's connector of a Config whose DialFunc is
// Dial, so Take can find each connection's socket from its *sql.Conn.
func Connector(inner driver.Connector) driver.Connector { return connector{inner} }

type connector struct{ driver.Connector }

func (c connector) Connect(ctx context.Context) (driver.Conn, error) {
	b := &box{}
	dc, err := c.Connector.Connect(context.WithValue(ctx, boxKey{}, b))
	if err != nil || b.c == nil {
		return dc, err
	}
	b.c.mu.Lock()
	b.c.owner = dc
	b.c.mu.Unlock()
	conns.Store(dc, b.c)
	return dc, nil
}

func lookup(dc any) *captured {
	v, ok := conns.Load(dc)
	if !ok {
		return nil
	}
	return v.(*captured)
}
