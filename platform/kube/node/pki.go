package node

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is the node's certificate authority and what it signed: the API
// server's serving certificate, the kubelet's, and the API server's client
// certificate for the kubelet (logs, exec, port-forward), which the
// kubelet checks against the same authority. Everything else reaches the
// API server with the admin token.
type pki struct {
	dir string
	ca  *x509.Certificate
	key *rsa.PrivateKey
}

// paths of the files newPKI writes, relative to its folder.
const (
	caCert            = "ca.crt"
	apiserverCert     = "apiserver.crt"
	apiserverKey      = "apiserver.key"
	kubeletCert       = "kubelet.crt"
	kubeletKey        = "kubelet.key"
	kubeletClientCert = "apiserver-kubelet-client.crt"
	kubeletClientKey  = "apiserver-kubelet-client.key"
	serviceAccountKey = "sa.key"
)

// newPKI makes the authority and every certificate in dir (mode 0700).
func newPKI(dir string, nodeIP net.IP, nodeName string) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("certificates: %w", err)
	}
	p := &pki{dir: dir}
	var err error
	if p.key, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		return nil, fmt.Errorf("certificates: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "tierbench-node-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(1, 0, 0),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &p.key.PublicKey, p.key)
	if err != nil {
		return nil, fmt.Errorf("certificates: %w", err)
	}
	if p.ca, err = x509.ParseCertificate(der); err != nil {
		return nil, fmt.Errorf("certificates: %w", err)
	}
	if err := writePEM(filepath.Join(dir, caCert), "CERTIFICATE", der); err != nil {
		return nil, err
	}
	loopback := net.IPv4(127, 0, 0, 1)
	steps := []struct {
		cert, key string
		cn        string
		org       []string
		ips       []net.IP
		dns       []string
		usage     x509.ExtKeyUsage
	}{
		{apiserverCert, apiserverKey, "kube-apiserver", nil, []net.IP{loopback, nodeIP, net.IPv4(10, 96, 0, 1)},
			[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}, x509.ExtKeyUsageServerAuth},
		{kubeletCert, kubeletKey, nodeName, nil, []net.IP{loopback, nodeIP}, []string{nodeName, "localhost"}, x509.ExtKeyUsageServerAuth},
		{kubeletClientCert, kubeletClientKey, "kube-apiserver-kubelet-client", []string{"system:masters"}, nil, nil, x509.ExtKeyUsageClientAuth},
	}
	for _, s := range steps {
		if err := p.sign(s.cert, s.key, pkix.Name{CommonName: s.cn, Organization: s.org}, s.ips, s.dns, s.usage); err != nil {
			return nil, err
		}
	}
	sa, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("certificates: %w", err)
	}
	if err := writePEM(filepath.Join(dir, serviceAccountKey), "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(sa)); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *pki) path(name string) string { return filepath.Join(p.dir, name) }

// sign writes a key and a certificate for it signed by the authority.
func (p *pki) sign(certName, keyName string, subject pkix.Name, ips []net.IP, dns []string, usage x509.ExtKeyUsage) error {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("certificate %s: %w", certName, err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: subject, IPAddresses: ips, DNSNames: dns,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(1, 0, 0),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment, ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &k.PublicKey, p.key)
	if err != nil {
		return fmt.Errorf("certificate %s: %w", certName, err)
	}
	if err := writePEM(p.path(keyName), "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(k)); err != nil {
		return err
	}
	return writePEM(p.path(certName), "CERTIFICATE", der)
}

func writePEM(path, typ string, der []byte) error {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		return fmt.Errorf("certificates: %w", err)
	}
	return nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}

// token is a random bearer token.
func token() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	return hex.EncodeToString(b), nil
}
