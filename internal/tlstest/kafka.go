package tlstest

import (
	"crypto/tls"
	"encoding/binary"
	"io"
	"net/netip"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// KafkaExchange is a client's requests and the broker's responses, frame
// by frame, with identity findings (a client ID on every request, no
// instance ID, a broker-assigned member ID).
func KafkaExchange() (reqs, resps [][]byte) {
	s := pcapgen.Session{Header: pcapgen.RequestHeader{ClientID: pcapgen.Ptr("tls-app"), CorrelationID: 1}}
	member := "broker-assigned-0001"
	pairs := []struct {
		req  kmsg.Request
		resp kmsg.Response
	}{
		{pcapgen.APIVersions(4, "kwatch-tls", "1.0"), pcapgen.APIVersionsResponse(4)},
		{pcapgen.Metadata(12, "t"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092)},
		{pcapgen.ConsumerGroupHeartbeat(1, "g", "", 0), pcapgen.ConsumerGroupHeartbeatResponse(1, 0, &member, 1)},
		{pcapgen.Metadata(12, "t", "u"), pcapgen.MetadataResponse(12, "10.0.0.1", 9092)},
	}
	for _, p := range pairs {
		corr, req := s.Encode(p.req)
		reqs = append(reqs, req)
		resps = append(resps, pcapgen.EncodeResponse(corr, p.req.GetVersion(), p.resp))
	}
	return reqs, resps
}

// readFrame reads one size-prefixed Kafka frame.
func readFrame(r io.Reader) error {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return err
	}
	_, err := io.ReadFull(r, make([]byte, binary.BigEndian.Uint32(size[:])))
	return err
}

// Kafka runs KafkaExchange over a TLS session, one round trip at a time.
func Kafka(t testing.TB, cfg Config) *Session {
	t.Helper()
	reqs, resps := KafkaExchange()
	return Run(t, cfg, func(c *tls.Conn) error {
		for _, req := range reqs {
			if _, err := c.Write(req); err != nil {
				return err
			}
			if err := readFrame(c); err != nil {
				return err
			}
		}
		return nil
	}, func(c *tls.Conn) error {
		for _, resp := range resps {
			if err := readFrame(c); err != nil {
				return err
			}
			if _, err := c.Write(resp); err != nil {
				return err
			}
		}
		return nil
	})
}

// ConnOptions are the addresses of the captures below.
var ConnOptions = pcapgen.ConnOptions{
	Client: netip.MustParseAddrPort("10.1.0.7:40001"),
	Broker: netip.MustParseAddrPort("10.0.0.1:9093"),
}

// PlainCapture is KafkaExchange in plaintext, as a pcap.
func PlainCapture(t testing.TB) []byte {
	t.Helper()
	c := pcapgen.New(pcapgen.Options{})
	cn := c.Conn(ConnOptions)
	reqs, resps := KafkaExchange()
	for i := range reqs {
		cn.Raw(pcapgen.ToBroker, reqs[i])
		cn.Raw(pcapgen.ToClient, resps[i])
	}
	cn.Close()
	return captureBytes(t, c)
}

// Capture is session s as a capture in format.
func Capture(t testing.TB, s *Session, format pcapgen.Format) []byte {
	t.Helper()
	c := pcapgen.New(pcapgen.Options{Format: format})
	cn := c.Conn(ConnOptions)
	for _, ch := range s.Chunks {
		d := pcapgen.ToClient
		if ch.FromClient {
			d = pcapgen.ToBroker
		}
		cn.Raw(d, ch.B)
	}
	cn.Close()
	return captureBytes(t, c)
}

func captureBytes(t testing.TB, c *pcapgen.Capture) []byte {
	b, err := c.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
