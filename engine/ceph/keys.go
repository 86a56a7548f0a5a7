package ceph

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// The run's cephx keys. Every key is made here for one run, from the
// system's random source, and reaches a daemon or tool only in a 0600
// keyring file (or the 0600 JSON file `ceph osd new` reads), never on a
// command line.

// newKey returns a cephx secret as Ceph writes it: base64 of its
// CryptoKey encoding (type 1 = AES, the creation time, and a 16-byte
// secret with its length), what `ceph-authtool --gen-key` makes.
func newKey() (string, error) {
	b := make([]byte, 2+4+4+2+16)
	binary.LittleEndian.PutUint16(b[0:], 1) // CEPH_CRYPTO_AES
	now := time.Now()
	binary.LittleEndian.PutUint32(b[2:], uint32(now.Unix()))
	binary.LittleEndian.PutUint32(b[6:], uint32(now.Nanosecond()))
	binary.LittleEndian.PutUint16(b[10:], 16)
	if _, err := rand.Read(b[12:]); err != nil {
		return "", fmt.Errorf("make a cephx key: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// entity is one cephx name with its key and capabilities.
type entity struct {
	name string // mon., client.admin, mgr.x, osd.0
	key  string
	caps [][2]string // service, capability
}

// keyring writes entities in Ceph's keyring syntax.
func keyring(es ...entity) []byte {
	var b strings.Builder
	for _, e := range es {
		fmt.Fprintf(&b, "[%s]\n\tkey = %s\n", e.name, e.key)
		for _, c := range e.caps {
			fmt.Fprintf(&b, "\tcaps %s = %q\n", c[0], c[1])
		}
	}
	return []byte(b.String())
}

// The run's entities besides the OSDs, whose keys `ceph osd new` registers.
const (
	monName   = "mon."
	adminID   = "admin"
	adminName = "client." + adminID
	mgrID     = "x"
	rgwID     = "rgw.tierbench"
	rgwName   = "client." + rgwID
)

// keys are the run's entities, made with new keys.
type keys struct {
	mon, admin, mgr, rgw entity
}

func newKeys() (keys, error) {
	var k keys
	for _, e := range []struct {
		to   *entity
		name string
		caps [][2]string
	}{
		{&k.mon, monName, [][2]string{{"mon", "allow *"}}},
		{&k.admin, adminName, [][2]string{{"mds", "allow *"}, {"mgr", "allow *"}, {"mon", "allow *"}, {"osd", "allow *"}}},
		{&k.mgr, "mgr." + mgrID, [][2]string{{"mds", "allow *"}, {"mon", "allow profile mgr"}, {"osd", "allow *"}}},
		// radosgw makes its pools, so it may write the osdmap.
		{&k.rgw, rgwName, [][2]string{{"mon", "allow rw"}, {"osd", "allow rwx"}}},
	} {
		key, err := newKey()
		if err != nil {
			return keys{}, err
		}
		*e.to = entity{name: e.name, key: key, caps: e.caps}
	}
	return k, nil
}

// osdSecret is the JSON `ceph osd new -i` reads: the OSD's key.
func osdSecret(key string) []byte {
	b, _ := json.Marshal(map[string]string{"cephx_secret": key})
	return b
}
