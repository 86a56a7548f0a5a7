package images

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"os"
)

// Pause is the pod sandbox's image: the static tierbench binary as
// /pause, run as `tierbench pause`, which sleeps until it is told to
// stop and reaps the pod's orphans. It spares the cluster the
// registry.k8s.io/pause image, which it could not pull.
func Pause(tierbench string) (Recipe, error) {
	bin, err := os.ReadFile(tierbench)
	if err != nil {
		return Recipe{}, fmt.Errorf("pause image: %w", err)
	}
	return Recipe{
		Name:   "tierbench.local/pause:1",
		Files:  []File{{Path: "/pause", Mode: 0o755, Data: bin}},
		Config: Config{Entrypoint: []string{"/pause", "pause"}},
	}, nil
}

// Tierbench is the load generator's image, as the repository's
// Dockerfile makes it on distroless/static:nonroot: the static binary
// on PATH, run as uid and gid 65532 (the uid the driver Job runs as).
// Its tag is the binary's hash, so that a rebuilt tierbench is a new
// image and pods never run a stale one.
func Tierbench(tierbench string) (Recipe, error) {
	bin, err := os.ReadFile(tierbench)
	if err != nil {
		return Recipe{}, fmt.Errorf("tierbench image: %w", err)
	}
	sum := sha256.Sum256(bin)
	return Recipe{
		Name: "tierbench.local/tierbench:" + hex.EncodeToString(sum[:])[:12],
		Files: []File{
			{Path: "/usr/local/bin/tierbench", Mode: 0o755, Data: bin},
			{Path: "/etc/passwd", Mode: 0o644, Data: []byte(
				"root:x:0:0:root:/root:/sbin/nologin\n" +
					"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
			{Path: "/etc/group", Mode: 0o644, Data: []byte("root:x:0:\nnonroot:x:65532:\n")},
			{Path: "/root", Mode: os.ModeDir | 0o700},
			// Files are root's: a home the user can write to must be
			// open to all, as /tmp is.
			{Path: "/home/nonroot", Mode: os.ModeDir | os.ModeSticky | 0o777},
			{Path: "/tmp", Mode: os.ModeDir | os.ModeSticky | 0o777},
		},
		Config: Config{
			Entrypoint: []string{"tierbench"},
			Env:        []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/nonroot"},
			User:       "65532:65532",
		},
	}, nil
}

// CheckStatic refuses a tierbench binary that is dynamically linked (it
// names an ELF interpreter, as a build with cgo does): the images hold
// the binary alone, with no C library for it to load, so its pods would
// fail to start with "no such file or directory".
func CheckStatic(tierbench string) error {
	f, err := elf.Open(tierbench)
	if err != nil {
		return fmt.Errorf("read %s: %w", tierbench, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked, and the node's images hold tierbench alone: build it static (make build, which sets CGO_ENABLED=0) and run that binary", tierbench)
		}
	}
	return nil
}
