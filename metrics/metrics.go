// Package metrics serves kwatch's counters to Prometheus (SPEC.md section
// 7: --metrics ADDR on live and aggregate). It reads the same counters the
// report prints, on each scrape, through one narrow interface: nothing is
// counted twice and the hot path pays nothing for metrics.
//
// Concurrency: a scrape may run on any goroutine; the sources it reads are
// safe for that (audit.Auditor.Counts locks, Extra funcs are the caller's
// to make safe).
package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kwatch/kwatch/audit"
)

// Counts is what the report's totals come from (audit.Auditor).
type Counts interface {
	Counts() (audit.Totals, int)
}

// Extra is one more counter or gauge the caller owns: kernel drops of a
// live capture, records an agent dropped, an aggregator's lag.
type Extra struct {
	Name, Help string
	Counter    bool // a counter (monotonic); else a gauge
	Value      func() float64
}

// collector turns Counts and Extras into metrics at scrape time.
type collector struct {
	src    Counts
	extras []Extra
	descs  map[string]*prometheus.Desc
}

var (
	descPackets   = prometheus.NewDesc("kwatch_packets_total", "Packets read from the capture.", nil, nil)
	descBytes     = prometheus.NewDesc("kwatch_bytes_total", "Bytes of the packets read, as on the wire.", nil, nil)
	descConns     = prometheus.NewDesc("kwatch_connections_total", "TCP connections followed.", nil, nil)
	descKafka     = prometheus.NewDesc("kwatch_kafka_connections_total", "TCP connections recognised as Kafka.", nil, nil)
	descOpen      = prometheus.NewDesc("kwatch_open_connections", "Kafka connections not yet ended.", nil, nil)
	descRequests  = prometheus.NewDesc("kwatch_requests_total", "Kafka requests decoded, by request header version.", []string{"header_version"}, nil)
	descResponses = prometheus.NewDesc("kwatch_responses_total", "Kafka responses matched to their request.", nil, nil)
	descFindings  = prometheus.NewDesc("kwatch_findings_total", "Findings by rule and the rule's severity.", []string{"rule", "severity"}, nil)
	descCoverage  = prometheus.NewDesc("kwatch_coverage_events_total", "Coverage events (SPEC.md 3.6) by event.", []string{"event"}, nil)
	descClients   = prometheus.NewDesc("kwatch_client_instances", "Client rows of the report (instances and legacy clients).", nil, nil)
	descDrops     = prometheus.NewDesc("kwatch_kernel_drops_total", "Packets the kernel dropped before kwatch read them (live capture).", nil, nil)
)

// Registry returns a Prometheus registry with kwatch's metrics over src
// and extras.
func Registry(src Counts, extras ...Extra) *prometheus.Registry {
	c := &collector{src: src, extras: extras, descs: map[string]*prometheus.Desc{}}
	for _, e := range extras {
		c.descs[e.Name] = prometheus.NewDesc(e.Name, e.Help, nil, nil)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	return reg
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPackets, descBytes, descConns, descKafka, descOpen, descRequests,
		descResponses, descFindings, descCoverage, descClients, descDrops} {
		ch <- d
	}
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	t, rows := c.src.Counts()
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	counter(descPackets, t.Packets)
	counter(descBytes, t.Bytes)
	counter(descConns, t.Connections)
	counter(descKafka, t.KafkaConnections)
	ch <- prometheus.MustNewConstMetric(descOpen, prometheus.GaugeValue, float64(t.OpenConnections))
	for v, n := range t.RequestsByHeaderVersion {
		counter(descRequests, n, v)
	}
	counter(descResponses, t.Responses)
	for _, r := range audit.Rules() {
		counter(descFindings, t.FindingsByRule[r.ID], r.ID, r.Severity.String())
	}
	for ev, n := range t.Coverage {
		counter(descCoverage, n, ev)
	}
	ch <- prometheus.MustNewConstMetric(descClients, prometheus.GaugeValue, float64(rows))
	counter(descDrops, t.KernelDropped)
	for _, e := range c.extras {
		kind := prometheus.GaugeValue
		if e.Counter {
			kind = prometheus.CounterValue
		}
		ch <- prometheus.MustNewConstMetric(c.descs[e.Name], kind, e.Value())
	}
}

// Server serves a registry's metrics on /metrics.
type Server struct {
	srv *http.Server
	ln  net.Listener
}

// Serve listens on addr (HOST:PORT; port 0 picks one) and serves reg in
// the background until Close.
func Serve(addr string, reg *prometheus.Registry) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	s := &Server{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}, ln: ln}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the listener is ours; Serve ends only when it is closed
		}
	}()
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops serving.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}
