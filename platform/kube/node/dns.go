package node

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/tierbench/tierbench/platform/kube"
)

// clusterDomain is the node's DNS domain.
const clusterDomain = "cluster.local."

// clusterDNS answers the pods' lookups of Services and of a headless
// Service's pods (what Ignite's discovery names: pod-0.service), as a
// cluster's DNS (CoreDNS) does, from the API server on each question: a
// node of one machine gets few. Other names get NXDOMAIN: the machine
// has no way out.
type clusterDNS struct {
	api     *kube.Cluster
	servers []*dns.Server
}

// serveDNS listens on addr (UDP and TCP) until stop.
func serveDNS(api *kube.Cluster, addr string) (*clusterDNS, error) {
	d := &clusterDNS{api: api}
	for _, network := range []string{"udp", "tcp"} {
		srv := &dns.Server{Addr: addr, Net: network, Handler: d}
		started := make(chan error, 1)
		srv.NotifyStartedFunc = func() { started <- nil }
		go func() { started <- srv.ListenAndServe() }()
		if err := <-started; err != nil {
			d.stop()
			return nil, fmt.Errorf("cluster DNS on %s/%s: %w", addr, network, err)
		}
		d.servers = append(d.servers, srv)
	}
	return d, nil
}

func (d *clusterDNS) stop() {
	for _, s := range d.servers {
		_ = s.Shutdown()
	}
}

// ServeDNS answers A questions under the cluster domain.
func (d *clusterDNS) ServeDNS(w dns.ResponseWriter, q *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(q)
	m.Authoritative = true
	if len(q.Question) != 1 {
		m.Rcode = dns.RcodeFormatError
		_ = w.WriteMsg(m)
		return
	}
	question := q.Question[0]
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	ips, found := d.lookup(ctx, strings.ToLower(question.Name))
	switch {
	case !found:
		m.Rcode = dns.RcodeNameError
	case question.Qtype == dns.TypeA || question.Qtype == dns.TypeANY:
		for _, ip := range ips {
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: question.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 5}, A: ip})
		}
	}
	_ = w.WriteMsg(m)
}

// lookup resolves SERVICE.NS.svc.cluster.local (the ClusterIP; a headless
// Service's endpoints) and HOST.SERVICE.NS.svc.cluster.local (the
// endpoint of that hostname).
func (d *clusterDNS) lookup(ctx context.Context, name string) ([]net.IP, bool) {
	rest, ok := strings.CutSuffix(name, ".svc."+clusterDomain)
	if !ok {
		return nil, false
	}
	labels := strings.Split(rest, ".")
	var host, svc, ns string
	switch len(labels) {
	case 2:
		svc, ns = labels[0], labels[1]
	case 3:
		host, svc, ns = labels[0], labels[1], labels[2]
	default:
		return nil, false
	}
	var service struct {
		Spec struct{ ClusterIP string }
	}
	if err := d.api.Do(ctx, http.MethodGet, "/api/v1/namespaces/"+ns+"/services/"+svc, nil, &service); err != nil {
		return nil, false
	}
	if host == "" && service.Spec.ClusterIP != "" && service.Spec.ClusterIP != "None" {
		return []net.IP{net.ParseIP(service.Spec.ClusterIP)}, true
	}
	var slices struct {
		Items []struct {
			Endpoints []struct {
				Addresses []string
				Hostname  string
			}
		}
	}
	sel := url.QueryEscape("kubernetes.io/service-name=" + svc)
	if err := d.api.Do(ctx, http.MethodGet, "/apis/discovery.k8s.io/v1/namespaces/"+ns+"/endpointslices?labelSelector="+sel, nil, &slices); err != nil {
		return nil, false
	}
	var ips []net.IP
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if host != "" && e.Hostname != host {
				continue
			}
			for _, a := range e.Addresses {
				if ip := net.ParseIP(a); ip != nil && ip.To4() != nil {
					ips = append(ips, ip)
				}
			}
		}
	}
	return ips, host == "" || len(ips) > 0
}
