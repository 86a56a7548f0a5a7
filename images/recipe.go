package images

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"os"
	"strings"
)

// File is a file put into an image. Mode's type bits choose the kind:
// a regular file (Data is its content), a folder (os.ModeDir, Data
// empty) or a symbolic link (os.ModeSymlink, Data is the target). It is
// owned by root; zero permission bits mean 0644 (0755 for a folder).
type File struct {
	Path string // absolute, inside the image
	Mode os.FileMode
	Data []byte
}

// Config is the image's OCI/docker config: what a container runs when
// the pod does not say otherwise.
type Config struct {
	Entrypoint, Cmd, Env []string
	User, WorkingDir     string
}

// Recipe is one image: an optional Debian root made by mmdebstrap, with
// Files laid over it, in a single layer.
type Recipe struct {
	// Name is the full reference, e.g. "tierbench.local/postgres:15":
	// the name pods give in their image field.
	Name string
	// Suite is the Debian suite for mmdebstrap ("bookworm"); empty: no
	// Debian root, the image holds Files only.
	Suite string
	// Packages are installed on top of Debian's essential set
	// (mmdebstrap --include).
	Packages []string
	// Hooks are shell commands run once the packages are installed
	// (mmdebstrap --customize-hook): "$1" is the root, seen from the
	// build machine.
	Hooks []string
	// Files are laid over the root last, replacing what is there.
	Files  []File
	Config Config
}

// formatVersion is part of every key: bump it when Build's output for
// the same recipe changes, so that cached tarballs are made again.
const formatVersion = "images/1"

// Key is a short hex hash over every field of r (and the build's format
// version), so that a changed recipe gets a tarball of its own.
func (r Recipe) Key() string {
	h := keyHash{sha256.New()}
	h.str(formatVersion)
	// What Build adds to every Debian root is part of the recipe too.
	h.strs(dpkgExcludes)
	h.str(hostFilesHook)
	h.str(manFolderHook)
	h.str(r.Name)
	h.str(r.Suite)
	h.strs(r.Packages)
	h.strs(r.Hooks)
	h.int(uint64(len(r.Files)))
	for _, f := range r.Files {
		h.str(f.Path)
		h.int(uint64(f.Mode))
		h.bytes(f.Data)
	}
	h.strs(r.Config.Entrypoint)
	h.strs(r.Config.Cmd)
	h.strs(r.Config.Env)
	h.str(r.Config.User)
	h.str(r.Config.WorkingDir)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// keyHash writes each value with its length in front, so that no two
// different recipes hash the same bytes (["ab"] and ["a","b"] differ).
type keyHash struct{ hash.Hash }

func (h keyHash) int(n uint64) {
	h.Write(binary.AppendUvarint(nil, n))
}

func (h keyHash) bytes(b []byte) {
	h.int(uint64(len(b)))
	h.Write(b)
}

func (h keyHash) str(s string) { h.bytes([]byte(s)) }

func (h keyHash) strs(l []string) {
	h.int(uint64(len(l)))
	for _, s := range l {
		h.str(s)
	}
}

// baseName is r's tarball's name in the cache folder, less ".tar";
// key is r.Key(), which hashes every file's data and so is worth
// computing once.
func (r Recipe) baseName(key string) string {
	return safeName(r.Name) + "-" + key
}

// safeName turns an image reference into a file name part.
func safeName(name string) string {
	return strings.Map(func(c rune) rune {
		switch c {
		case '/', ':', '@', '\\':
			return '_'
		}
		return c
	}, name)
}
