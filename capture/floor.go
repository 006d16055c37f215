package capture

import "io"

// Floor runs the "floor" loop that later performance work compares
// against: read every packet of src and decode its link, IP and TCP headers
// with one reused LayerDecoder, nothing more. It returns the packets and
// captured bytes read; err is nil at a clean end of input.
func Floor(src Source) (packets, bytes int, err error) {
	d := NewLayerDecoder()
	var s Segment
	for {
		p, err := src.Next()
		if err == io.EOF {
			return packets, bytes, nil
		}
		if err != nil {
			return packets, bytes, err
		}
		packets++
		bytes += len(p.Data)
		d.Decode(&p, &s)
	}
}
