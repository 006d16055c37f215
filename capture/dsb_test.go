package capture

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// TestDecryptionSecretsBlock: a pcapng Decryption Secrets Block reaches
// Options.Secrets before the packets after it, and is skipped without a
// hook; a block whose secrets length overruns it is corrupt.
func TestDecryptionSecretsBlock(t *testing.T) {
	c := pcapgen.New(pcapgen.Options{Format: pcapgen.FormatPCAPNG})
	pcapgen.DemoModern(c, pcapgen.ConnOptions{})
	plain, err := c.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	secrets := []byte("CLIENT_RANDOM 00 11\n") // any bytes: capture does not read them
	tests := []struct {
		name    string
		file    []byte
		hook    bool
		want    []string
		corrupt bool
	}{
		{"hook", pcapgen.WithSecrets(plain, 0x544c534b, secrets, -1), true, []string{"TLSK:" + string(secrets)}, false},
		{"no-hook", pcapgen.WithSecrets(plain, 0x544c534b, secrets, -1), false, nil, false},
		{"other-type", pcapgen.WithSecrets(plain, 0x57474b4c, []byte("wg"), -1), true, []string{"WGKL:wg"}, false},
		{"overrun", pcapgen.WithSecrets(plain, 0x544c534b, secrets, 1000), true, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			var firstPacket int
			opts := Options{}
			if tt.hook {
				opts.Secrets = func(typ uint32, data []byte) {
					got = append(got, string([]byte{byte(typ >> 24), byte(typ >> 16), byte(typ >> 8), byte(typ)})+":"+string(data))
					if firstPacket != 0 {
						t.Errorf("secrets after packet %d", firstPacket)
					}
				}
			}
			src, err := NewReader(bytes.NewReader(tt.file), "dsb.pcapng", opts)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			n := 0
			for {
				p, err := src.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					if !tt.corrupt || !errors.Is(err, ErrCorrupt) {
						t.Fatalf("packet %d: %v", n+1, err)
					}
					return
				}
				n++
				firstPacket = int(p.Frame)
			}
			if tt.corrupt || n != c.Frames() || len(got) != len(tt.want) || (len(got) > 0 && got[0] != tt.want[0]) {
				t.Fatalf("%d of %d packets, secrets %q; want %q (corrupt: %v)", n, c.Frames(), got, tt.want, tt.corrupt)
			}
		})
	}
}
