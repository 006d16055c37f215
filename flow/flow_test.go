package flow

import (
	"net/netip"
	"testing"
)

func TestCompare(t *testing.T) {
	a := netip.MustParseAddrPort("10.0.0.2:40000")
	b := netip.MustParseAddrPort("10.0.0.3:40000")
	k := netip.MustParseAddrPort("10.0.0.1:9092")
	tests := []struct {
		name string
		x, y ConnID
		want int
	}{
		{"same", ConnID{a, k, 1}, ConnID{a, k, 1}, 0},
		{"start frame first", ConnID{b, k, 1}, ConnID{a, k, 2}, -1},
		{"then client", ConnID{a, k, 5}, ConnID{b, k, 5}, -1},
		{"then broker", ConnID{a, b, 5}, ConnID{a, k, 5}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.x.Compare(tt.y); got != tt.want {
				t.Errorf("Compare = %d, want %d", got, tt.want)
			}
			if got := tt.y.Compare(tt.x); got != -tt.want {
				t.Errorf("reverse Compare = %d, want %d", got, -tt.want)
			}
		})
	}
}

func TestSide(t *testing.T) {
	if Client.Other() != Broker || Broker.Other() != Client {
		t.Error("Other does not swap the sides")
	}
	if Client.String() != "client" || Broker.String() != "broker" {
		t.Errorf("names %q %q", Client, Broker)
	}
}

func TestDirection(t *testing.T) {
	if Client.Direction() != "client->broker" || Broker.Direction() != "broker->client" {
		t.Errorf("directions %q %q", Client.Direction(), Broker.Direction())
	}
}
