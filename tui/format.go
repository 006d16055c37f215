package tui

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// count formats n with thousands separators: 1234567 -> "1,234,567".
func count[T ~int | ~int64 | ~uint64 | ~uint32 | ~int32](n T) string {
	neg := n < 0
	var s string
	if neg {
		s = strconv.FormatInt(-int64(n), 10)
	} else {
		s = strconv.FormatUint(uint64(n), 10)
	}
	if len(s) > 3 {
		var b strings.Builder
		head := len(s) % 3
		if head > 0 {
			b.WriteString(s[:head])
		}
		for i := head; i < len(s); i += 3 {
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(s[i : i+3])
		}
		s = b.String()
	}
	if neg {
		return "-" + s
	}
	return s
}

// bytesIEC formats a byte count with binary units: 1536 -> "1.5 KiB".
func bytesIEC(n float64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%.0f B", n)
	}
	exp := 0
	for n >= unit && exp < 5 {
		n /= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", n, "KMGTP"[exp-1])
}

// rate formats a per-second rate with a short SI suffix.
func rate(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0) || v < 0:
		return "-"
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.1fk", v/1e3)
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.1f", v)
	}
}

// elapsed formats capture time: milliseconds below a minute, seconds above.
func elapsed(d time.Duration) string {
	if d < time.Minute {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// stamp formats a packet time for lists and details (UTC, so a replay
// reads the same everywhere).
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("15:04:05.000")
}

// fullStamp is stamp with the date, for detail screens.
func fullStamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05.000000Z")
}

// list joins values for a table cell: "a, b" or "a +2".
func list(v []string, show int) string {
	switch {
	case len(v) == 0:
		return "-"
	case len(v) <= show:
		return strings.Join(v, ", ")
	}
	return strings.Join(v[:show], ", ") + fmt.Sprintf(" +%d", len(v)-show)
}

// frameSpan names where a case was seen: "frame 7" or "frames 7–90".
func frameSpan(first, last uint64) string {
	if first == last {
		return fmt.Sprintf("frame %d", first)
	}
	return fmt.Sprintf("frames %d–%d", first, last)
}

// orDash returns s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// sortedKeys returns the keys of m in order, for stable screens.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// sumValues adds up the counts in m.
func sumValues(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// memberCount counts member IDs over all groups.
func memberCount(m map[string][]string) int {
	n := 0
	for _, v := range m {
		n += len(v)
	}
	return n
}

var sparkBlocks = []rune("▁▂▃▄▅▆▇█")

// sparkline draws the last width samples, scaled to the largest of them.
// All-zero (or empty) input draws the lowest block, so the line's extent
// stays visible.
func sparkline(samples []float64, width int) string {
	if width <= 0 {
		return ""
	}
	if len(samples) > width {
		samples = samples[len(samples)-width:]
	}
	peak := 0.0
	for _, v := range samples {
		peak = max(peak, v)
	}
	var b strings.Builder
	for _, v := range samples {
		i := 0
		if peak > 0 && v > 0 {
			i = int(math.Ceil(v/peak*float64(len(sparkBlocks)))) - 1
			i = min(max(i, 0), len(sparkBlocks)-1)
		}
		b.WriteRune(sparkBlocks[i])
	}
	return b.String()
}
