package mariadb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/server"
)

// openTarget connects to a server tierbench did not start.
func openTarget(ctx context.Context, target string) (engine.DB, error) {
	return server.OpenTarget(ctx, Engine{}.Spec(), target, targetConfig, func(ctx context.Context, c *mysql.Config) (_ engine.DB, err error) {
		d := &DB{addr: c.Addr}
		defer d.closers.CloseOnError(&err)
		return d, d.connect(ctx, c)
	})
}

// laneTarget says why a target's connections are not plain, which clients
// on lanes need (engine.Spec.LaneTarget): the driver's tls parameter, off
// unless set.
func laneTarget(u *url.URL) string {
	switch v := strings.ToLower(u.Query().Get("tls")); v {
	case "", "false", "0":
		return ""
	default:
		return fmt.Sprintf("the target's tls=%s encrypts its connections: remove tls from the target", v)
	}
}

// targetConfig turns mysql://user:password@host:port/database?params into
// the driver's configuration. The URL's parameters are the driver's own
// DSN parameters (tls, charset, readTimeout, ...), so its parser applies
// them; the address, database and account come from the URL. The port
// defaults to 3306, the connect timeout to 10s; statements are prepared on
// the server unless the URL sets interpolateParams.
func targetConfig(u *url.URL) (*mysql.Config, error) {
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" || strings.Contains(db, "/") {
		return nil, errors.New("name one database: mysql://user:password@host:port/DATABASE (it must exist; tierbench creates and drops its tables in it)")
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		host = "127.0.0.1"
	}
	if port == "" {
		port = "3306"
	}
	dsn := "tcp(" + net.JoinHostPort(host, port) + ")/" + url.PathEscape(db)
	if u.RawQuery != "" {
		dsn += "?" + u.RawQuery
	}
	c, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	if u.User != nil {
		c.User = u.User.Username()
		c.Passwd, _ = u.User.Password()
	}
	if c.Timeout == 0 {
		c.Timeout = 10 * time.Second
	}
	return c, nil
}
