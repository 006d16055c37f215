package main

import (
	"maps"

	"github.com/kwatch/kwatch/audit"
	"github.com/kwatch/kwatch/pipeline"
)

// addCaptureStats gives the auditor what the pipeline counted: packets,
// bytes and TCP connections, and what the capture layers unwrapped.
func addCaptureStats(a *audit.Auditor, st pipeline.Stats) {
	a.AddCapture(st.Packets, st.Bytes, st.Connections)
	addLayerStats(a, st)
}

// addLayerStats gives the auditor what the capture layers unwrapped and
// how many connections the decoder judged not Kafka.
func addLayerStats(a *audit.Auditor, st pipeline.Stats) {
	unwrapped := st.Tunnels.Named()
	maps.Copy(unwrapped, st.Fragments.Named())
	a.AddUnwrapped(unwrapped)
	a.AddNotKafka(st.Decoders.NotKafka)
	a.AddEvicted(st.Reassembly.Evicted)
}
