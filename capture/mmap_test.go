package capture

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// TestMappedMatchesRead: a file opened by path with Options.Mmap yields the
// same packets and the same final error as the same bytes read through
// NewReader, whole and cut short.
func TestMappedMatchesRead(t *testing.T) {
	var pcap, ng bytes.Buffer
	if _, err := pcapgen.WriteBulk(&pcap, pcapgen.BulkOptions{Connections: 3, Requests: 40, PayloadSize: 5000, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := pcapgen.WriteBulk(&ng, pcapgen.BulkOptions{Connections: 2, Requests: 20, PayloadSize: 3000, Seed: 2, Format: pcapgen.FormatPCAPNG}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		data []byte
	}{
		{name: "pcap", data: pcap.Bytes()},
		{name: "pcap cut mid-record", data: pcap.Bytes()[:pcap.Len()-7]},
		{name: "pcapng", data: ng.Bytes()},
		{name: "pcapng cut mid-block", data: ng.Bytes()[:ng.Len()-9]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "in.cap")
			if err := os.WriteFile(path, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			a, err := Open(path, Options{Mmap: true})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			b, err := NewReader(bytes.NewReader(tt.data), path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for n := 1; ; n++ {
				pa, ea := a.Next()
				pb, eb := b.Next()
				if (ea == nil) != (eb == nil) || ea != nil && ea.Error() != eb.Error() {
					t.Fatalf("packet %d: mapped error %v, read error %v", n, ea, eb)
				}
				if ea != nil {
					if errors.Is(ea, io.EOF) != !bytes.Contains([]byte(tt.name), []byte("cut")) {
						t.Fatalf("end %v does not fit the input", ea)
					}
					break
				}
				if pa.Frame != pb.Frame || !pa.Time.Equal(pb.Time) || !bytes.Equal(pa.Data, pb.Data) || pa.Length != pb.Length {
					t.Fatalf("packet %d differs", n)
				}
			}
		})
	}
}
