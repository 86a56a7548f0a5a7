package engine

import (
	"net"
	"net/url"
	"strconv"
	"strings"
)

// URL renders the endpoint as a target URL (scheme://user:password@host:port/database),
// the form Config.Target takes; it carries the password, so record it only
// through RedactTarget.
func (e Endpoint) URL() string {
	host := e.Host
	u := url.URL{Scheme: e.Scheme}
	if strings.HasPrefix(host, "/") {
		// A Unix socket folder (PostgreSQL): libpq and pgx take it as ?host=.
		host, u.RawQuery = "", url.Values{"host": {e.Host}}.Encode()
	}
	u.Host = host
	if e.Port > 0 {
		u.Host = net.JoinHostPort(host, strconv.Itoa(e.Port))
	}
	switch {
	case e.Password != "":
		u.User = url.UserPassword(e.User, e.Password)
	case e.User != "":
		u.User = url.User(e.User)
	}
	if e.Database != "" {
		u.Path = "/" + e.Database
	}
	return u.String()
}

// RedactTargetIn removes target's password from text (a study file stored
// with the results): the URL is replaced by its redacted form, and any other
// occurrence of the password too.
func RedactTargetIn(text, target string) string {
	if target == "" {
		return text
	}
	text = strings.ReplaceAll(text, target, RedactTarget(target))
	if u, err := url.Parse(target); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			text = strings.ReplaceAll(text, pw, "xxxxx")
		}
	}
	return text
}
