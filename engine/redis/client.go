package redis

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/server"
)

// The client side of a DB: the one go-redis client its sessions take
// their connections from, on a started server or a target.

// connect makes the client sessions share and reads the server's version.
// Close closes the sessions still open, then the client.
func (d *DB) connect(ctx context.Context, opts *goredis.Options) error {
	quietOnce.Do(func() { goredis.SetLogger(quietLogger{}) })
	d.client = goredis.NewClient(opts)
	d.closers.Do(func() { _ = d.client.Close() }) // errors only on a second close
	d.closers.Do(d.closeSessions)
	info, err := d.client.Info(ctx, "server").Result()
	if err != nil {
		return fmt.Errorf("INFO server: %w", err)
	}
	d.version = parseVersion(info)
	return nil
}

// openTarget connects to a server tierbench did not start. go-redis reads
// the URL (port 6379 by default, the database number, TLS for rediss://);
// the client otherwise behaves as with a started server.
func openTarget(ctx context.Context, target string) (engine.DB, error) {
	parse := func(u *url.URL) (*goredis.Options, error) { return goredis.ParseURL(u.String()) }
	return server.OpenTarget(ctx, Engine{}.Spec(), target, parse, func(ctx context.Context, u *goredis.Options) (_ engine.DB, err error) {
		opts := clientOptions(u.Addr)
		opts.Username, opts.Password, opts.DB, opts.TLSConfig = u.Username, u.Password, u.DB, u.TLSConfig
		d := &DB{addr: u.Addr, sessions: map[*Session]struct{}{},
			target: &engine.Endpoint{Scheme: "redis", User: u.Username, Password: u.Password}}
		if u.DB != 0 {
			d.target.Database = strconv.Itoa(u.DB)
		}
		if host, port, err := net.SplitHostPort(u.Addr); err == nil {
			d.target.Host = host
			d.target.Port, _ = strconv.Atoi(port)
		}
		defer d.closers.CloseOnError(&err)
		return d, d.connect(ctx, opts)
	})
}

// clientOptions configures the shared client sessions take connections from.
func clientOptions(addr string) *goredis.Options {
	return &goredis.Options{
		Addr: addr,
		// RESP2, as YCSB's Jedis speaks; replies to HGETALL are flat arrays.
		Protocol: 2,
		// Redis 7.0 knows neither CLIENT SETINFO nor maintenance
		// notifications; skip the failing round trips on connect.
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
		// A failed operation is an error in the run, not something to hide
		// by sending it again.
		MaxRetries:            -1,
		DialTimeout:           5 * time.Second,
		ReadTimeout:           opTimeout,
		WriteTimeout:          opTimeout,
		ContextTimeoutEnabled: true,
		// Each session keeps one connection for its life, so the pool must
		// hold as many as there may be sessions.
		PoolSize:    maxClients,
		PoolTimeout: opTimeout,
	}
}

// quietLogger drops go-redis's own log lines ("failed to dial after 5
// attempts"), which would break tierbench's progress lines; every failure
// they describe also comes back as an operation's error. go-redis's logger
// is global, so it is set once, when a Redis engine is first opened.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

var quietOnce sync.Once

// parseVersion finds redis_version in INFO server output.
func parseVersion(info string) string {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return "Redis " + v
		}
	}
	return "Redis (unknown version)"
}
