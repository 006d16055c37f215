package capture

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestNextIntoSameAsNext: reading a capture with NextInto gives the packets,
// and the error that ends them, that Next gives, for both formats, several
// files as one input, and a file cut short.
func TestNextIntoSameAsNext(t *testing.T) {
	all, err := filepath.Glob("../testdata/pcaps/*.pcap*")
	if err != nil || len(all) < 3 {
		t.Fatalf("test captures: %v (%d)", err, len(all))
	}
	cut := filepath.Join(t.TempDir(), "cut.pcap")
	data, err := os.ReadFile(all[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cut, data[:200], 0o644); err != nil {
		t.Fatal(err)
	}
	inputs := [][]string{{all[0]}, {all[1]}, {all[2]}, all[:3], {cut}}
	for _, paths := range inputs {
		t.Run(filepath.Base(paths[0]), func(t *testing.T) {
			want, wantErr := readPaths(t, paths, false)
			got, gotErr := readPaths(t, paths, true)
			if len(want) == 0 && paths[0] != cut {
				t.Fatal("no packets read")
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("NextInto read %d packets, Next %d; they differ", len(got), len(want))
			}
			if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
				t.Errorf("NextInto ended with %v, Next with %v", gotErr, wantErr)
			}
		})
	}
}

// readPaths reads every packet of paths as one input, copying their data,
// through Next or, with into, through NextInto into one reused Packet.
func readPaths(t *testing.T, paths []string, into bool) ([]Packet, error) {
	t.Helper()
	src, err := OpenFiles(paths, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if !into {
		return readAll(t, src)
	}
	is, ok := src.(IntoSource)
	if !ok {
		t.Fatal("a file Source is not an IntoSource")
	}
	return readAll(t, &intoOnly{IntoSource: is})
}

// intoOnly is a Source whose Next reads through NextInto into one Packet,
// as pipeline.Run does.
type intoOnly struct {
	IntoSource
	p Packet
}

func (s *intoOnly) Next() (Packet, error) {
	err := s.NextInto(&s.p)
	return s.p, err
}
