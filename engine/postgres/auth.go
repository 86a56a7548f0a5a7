package postgres

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/tierbench/tierbench/engine/server"
	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/host/secrets"
)

// How a run's server keeps other local users out: who may log in how
// (hbaConf), where its socket lives (socketFolder), and the run's password
// (setPassword), which reaches the server only as a SCRAM verifier.

// hbaConf is every run's pg_hba.conf, written at each Open (a reopened
// cluster too): no trust line anywhere. Over TCP everyone needs the run's
// password (scram-sha-256); over the socket only the postgres OS user gets
// in, as role postgres (peer: OS user name = role name), and every other
// role or user is refused. tierbench logs in over TCP; the socket serves
// only setPassword, run as the postgres OS user before anyone knows a
// password.
const hbaConf = `# Written by tierbench for this run: no trust, nothing but 127.0.0.1.
# TYPE  DATABASE  USER      ADDRESS       METHOD
local   all       postgres                peer
host    all       all       127.0.0.1/32  scram-sha-256
`

// writeConf writes a configuration file of the run's cluster, 0600 and
// owned by the postgres user, as PostgreSQL wants its files.
func writeConf(path, text string, pg osAccount) error {
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chown(path, pg.uid, pg.gid); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// socketFolder makes the run's private socket folder (0700, owned by the
// postgres user) in the scratch folder, so that a killed run leaves its
// socket and lock file where tierbench's cleanup removes them rather than
// in /tmp. When that path is too long for a socket (.s.PGSQL.PORT must fit
// in 107 bytes), the folder goes in the system's temporary folder instead.
func socketFolder(scratch string) (string, error) {
	parent := scratch
	// MkdirTemp adds up to 10 digits; the socket's name is at most
	// "/.s.PGSQL.65535".
	if len(scratch)+len("/"+socketPrefix)+10+len("/.s.PGSQL.65535") > maxSocketPath {
		parent = ""
	}
	dir, err := secrets.PrivateDir(parent, socketPrefix, osUser)
	if err != nil {
		return "", fmt.Errorf("socket folder: %w", err)
	}
	return dir, nil
}

// acceptsLogins returns a ready check that the server at addr has finished
// starting: it answers a startup message with an authentication request
// rather than "the database system is starting up". It sends no password
// and hangs up at the request, which PostgreSQL does not log (libpq does
// the same when it has no password to give), so a start leaves no failed
// logins in the server's log.
func acceptsLogins(addr string) func(context.Context) error {
	return server.Handshake(addr, func(c net.Conn) error {
		fe := pgproto3.NewFrontend(c, c)
		fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber,
			Parameters: map[string]string{"user": osUser, "database": database}})
		if err := fe.Flush(); err != nil {
			return err
		}
		msg, err := fe.Receive()
		if err != nil {
			return err
		}
		switch m := msg.(type) {
		case *pgproto3.AuthenticationSASL, *pgproto3.AuthenticationOk:
			return nil
		case *pgproto3.ErrorResponse:
			return fmt.Errorf("%s: %s (SQLSTATE %s)", m.Severity, m.Message, m.Code)
		default:
			return fmt.Errorf("the server answered a startup message with %T", msg)
		}
	})
}

// setPassword gives role postgres the run's password, as the postgres OS
// user through psql on the run's socket (peer authentication: no password
// needed yet). The statement carries a SCRAM verifier computed here, not
// the password, and goes in on psql's standard input, so neither the
// password nor the verifier is on a command line, and the password never
// reaches the server, its log or its statistics.
func setPassword(ctx context.Context, psql, sockDir string, port int, password string) error {
	verifier, err := scramVerifier(password)
	if err != nil {
		return err
	}
	sql := fmt.Sprintf("ALTER ROLE %s PASSWORD '%s';\n", osUser, verifier)
	if err := proc.RunInput(ctx, osUser, sql, psql, "-X", "-q", "-v", "ON_ERROR_STOP=1",
		"-h", sockDir, "-p", strconv.Itoa(port), "-U", osUser, "-d", database); err != nil {
		return fmt.Errorf("set the run's password: %w", err)
	}
	return nil
}

// scramIterations is PostgreSQL's default scram_iterations.
const scramIterations = 4096

// scramVerifier computes what PostgreSQL stores for a scram-sha-256
// password (RFC 5802, 7677; PostgreSQL's scram_build_secret):
// SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>. A password of
// ASCII letters and digits, as secrets.New makes, is its own SASLprep form.
func scramVerifier(password string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("scram salt: %w", err)
	}
	salted, err := pbkdf2.Key(sha256.New, password, salt, scramIterations, sha256.Size)
	if err != nil {
		return "", fmt.Errorf("scram verifier: %w", err)
	}
	mac := func(key []byte, msg string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(msg))
		return h.Sum(nil)
	}
	stored := sha256.Sum256(mac(salted, "Client Key"))
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("SCRAM-SHA-256$%d:%s$%s:%s", scramIterations, b64(salt), b64(stored[:]), b64(mac(salted, "Server Key"))), nil
}

// socketPath is the path of the run's socket in sockDir.
func socketPath(sockDir string, port int) string {
	return filepath.Join(sockDir, ".s.PGSQL."+strconv.Itoa(port))
}
