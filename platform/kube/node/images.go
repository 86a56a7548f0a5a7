package node

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// importImage imports a docker-archive tarball into the node's containerd,
// in the namespace the CRI plugin uses.
func importImage(ctx context.Context, socket, tarball string) error {
	out, err := exec.CommandContext(ctx, "ctr", "--address", socket, "-n", "k8s.io", "images", "import", tarball).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ctr images import %s: %v: %s", tarball, err, strings.TrimSpace(string(out)))
	}
	return nil
}
