package redis

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/tierbench/tierbench/engine/server"
	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/host/reach"
	"github.com/tierbench/tierbench/host/secrets"
)

// What starting a redis-server needs beside its arguments: a data folder
// only its OS user may enter, the config file that carries the run's
// password, and a check that it answers.

// prepareDir closes the data folder to other users (mode 0700: the AOF and
// RDB hold every record) and gives it to runAs, whose server writes there;
// a reopened folder's files too. It then checks, as runAs, that the server
// can reach it through the tier's parent folders.
func prepareDir(ctx context.Context, dir, runAs string) error {
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("data folder: %w", err)
	}
	if runAs == "" {
		return nil
	}
	if err := proc.ChownAll(runAs, dir); err != nil {
		return fmt.Errorf("data folder: %w", err)
	}
	return reach.Check(ctx, "Redis", runAs, dir)
}

// writeConf writes the server's config file, which holds only the run's
// password (requirepass; every other setting is on the command line, where
// ps shows it), 0600 in a new private folder of runAs under scratch, where
// a killed run's cleanup finds it. When runAs cannot reach the scratch
// folder (or there is none), the private folder goes in the system's
// temporary folder, which every user may enter. The caller removes it.
func writeConf(ctx context.Context, scratch, runAs, password string) (string, error) {
	dir, err := secrets.PrivateDir(scratch, "redis-conf-", runAs)
	if err != nil {
		return "", fmt.Errorf("config file: %w", err)
	}
	if scratch != "" && reach.Check(ctx, "Redis", runAs, dir) != nil {
		os.Remove(dir)
		if dir, err = secrets.PrivateDir("", "tierbench-redis-conf-", runAs); err != nil {
			return "", fmt.Errorf("config file: %w", err)
		}
	}
	text := "# Written by tierbench for one run; removed once the server has read it.\nrequirepass " + password + "\n"
	if err := secrets.WriteFile(filepath.Join(dir, confName), []byte(text), runAs); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("config file: %w", err)
	}
	return dir, nil
}

// errLoading is a server still loading its AOF or RDB.
var errLoading = errors.New("LOADING")

// ping returns a ready check that sends AUTH with the run's password and
// PING on a fresh connection (AUTH is answered while loading, PING is
// not). It does not use go-redis: a pool that saw failed dials backs off
// for a second, which would slow every start.
func ping(addr, password string, loadingOK bool) func(context.Context) error {
	return server.Handshake(addr, func(c net.Conn) error {
		auth := fmt.Sprintf("*2\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n", len(password), password)
		if _, err := c.Write([]byte(auth + "*1\r\n$4\r\nPING\r\n")); err != nil {
			return err
		}
		r := bufio.NewReader(c)
		line, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		if line = strings.TrimSpace(line); line != "+OK" {
			return fmt.Errorf("AUTH answered %q", line)
		}
		if line, err = r.ReadString('\n'); err != nil {
			return err
		}
		line = strings.TrimSpace(line)
		switch {
		case line == "+PONG":
			return nil
		case strings.HasPrefix(line, "-LOADING"):
			if loadingOK {
				return nil
			}
			return fmt.Errorf("%w: %s", errLoading, line)
		default:
			return fmt.Errorf("PING answered %q", line)
		}
	})
}
