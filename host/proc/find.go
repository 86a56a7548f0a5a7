package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// ErrNotInstalled marks a missing program.
var ErrNotInstalled = errors.New("not installed")

// Find locates a program among candidates (names looked up in PATH, or
// paths), or names the package to install.
func Find(pkg string, candidates ...string) (string, error) {
	for _, c := range candidates {
		if strings.Contains(c, "/") {
			if _, err := os.Stat(c); err == nil {
				return c, nil
			}
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not installed: apt-get install %s: %w", candidates[0], pkg, ErrNotInstalled)
}
