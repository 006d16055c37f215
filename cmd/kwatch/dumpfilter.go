package main

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/decode"
)

// eventFilter selects the lines of kwatch dump (--filter KEY=VALUE,
// repeatable): api (a name such as Metadata, or a key number), client (a
// client host, a request's client ID, or an instance ID in either form),
// conn (a connection's client HOST:PORT). Values of one key are
// alternatives; different keys must all match. Coverage events pass an api
// filter never, the others by their connection.
type eventFilter struct {
	apis    []decode.APIKey
	clients []string
	conns   []netip.AddrPort
}

// parseEventFilter reads the --filter values.
func parseEventFilter(exprs []string) (*eventFilter, error) {
	if len(exprs) == 0 {
		return nil, nil
	}
	f := &eventFilter{}
	for _, x := range exprs {
		key, val, ok := strings.Cut(x, "=")
		if !ok || val == "" {
			return nil, usageError{fmt.Sprintf("--filter %q: want api=NAME, client=ID or conn=HOST:PORT", x)}
		}
		switch key {
		case "api":
			k, err := apiKeyOf(val)
			if err != nil {
				return nil, err
			}
			f.apis = append(f.apis, k)
		case "client":
			f.clients = append(f.clients, val)
		case "conn":
			ap, err := netip.ParseAddrPort(val)
			if err != nil {
				return nil, usageError{fmt.Sprintf("--filter conn=%q: want the client's HOST:PORT", val)}
			}
			f.conns = append(f.conns, ap)
		default:
			return nil, usageError{fmt.Sprintf("--filter %q: unknown key %q (want api, client or conn)", x, key)}
		}
	}
	return f, nil
}

// apiKeyOf reads an API by number or by Kafka's name (any case).
func apiKeyOf(s string) (decode.APIKey, error) {
	if n, err := strconv.ParseInt(s, 10, 16); err == nil && n >= 0 {
		return decode.APIKey(n), nil
	}
	for k := decode.APIKey(0); k < 1024; k++ {
		if name := k.String(); name != "" && strings.EqualFold(name, s) {
			return k, nil
		}
	}
	return 0, usageError{fmt.Sprintf("--filter api=%q: no such Kafka API", s)}
}

// keep reports whether the filter selects ev (a nil filter selects all).
func (f *eventFilter) keep(ev *decode.Event) bool {
	if f == nil {
		return true
	}
	if len(f.apis) > 0 && (ev.Kind == decode.KindCoverage || !slices.Contains(f.apis, ev.APIKey)) {
		return false
	}
	if len(f.conns) > 0 && !slices.Contains(f.conns, ev.Conn.Client) {
		return false
	}
	return len(f.clients) == 0 || slices.ContainsFunc(f.clients, func(c string) bool { return clientMatches(ev, c) })
}

// clientMatches: the event's client host, its request's client ID, or its
// header instance ID (Java or hex form) is c.
func clientMatches(ev *decode.Event, c string) bool {
	if ev.Conn.Client.Addr().String() == c {
		return true
	}
	if ev.Kind != decode.KindRequest {
		return false
	}
	if !ev.ClientIDNull && string(ev.ClientID) == c {
		return true
	}
	return ev.HasInstanceID && !ev.InstanceID.IsZero() &&
		(audit.JavaString(ev.InstanceID) == c || audit.HexString(ev.InstanceID) == c)
}
