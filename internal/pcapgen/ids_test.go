package pcapgen

import "testing"

func TestUUIDEncodings(t *testing.T) {
	id := [16]byte{0xfb, 0xef, 0xff, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0xff}
	tests := []struct {
		name string
		enc  func([16]byte) string
		want string
	}{
		{"java", JavaString, "--__AwQFBgcICQoLDA0O_w"},
		{"padded url", PaddedURL, "--__AwQFBgcICQoLDA0O_w=="},
		{"std", StdBase64, "++//AwQFBgcICQoLDA0O/w=="},
		{"std no pad", StdBase64NoPad, "++//AwQFBgcICQoLDA0O/w"},
		{"hex", Hex, "fbefff030405060708090a0b0c0d0eff"},
		{"dashed", Dashed, "fbefff03-0405-0607-0809-0a0b0c0d0eff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.enc(id)
			if got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			back, err := ParseUUID(got)
			if err != nil || back != id {
				t.Fatalf("ParseUUID(%q) = %x, %v", got, back, err)
			}
		})
	}
	for _, bad := range []string{"", "xyz", "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"} {
		if _, err := ParseUUID(bad); err == nil {
			t.Errorf("ParseUUID(%q) succeeded", bad)
		}
	}
	if s := SeqUUID(0); s[6]>>4 != 4 || s[8]>>6 != 2 {
		t.Errorf("SeqUUID is not version 4 / RFC variant: %x", s)
	}
}
