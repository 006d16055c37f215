package pcapgen_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kwatch/kwatch/internal/pcapgen"
)

// A scenario: a client whose instance ID changes mid-connection, segmented
// at 50 bytes with every 4th segment retransmitted.
func Example() {
	id, other := pcapgen.SeqUUID(0x10), pcapgen.SeqUUID(0x20)
	c := pcapgen.New(pcapgen.Options{Perturb: pcapgen.Perturb{MSS: 50, RetransmitEvery: 4}})
	cn := c.Conn(pcapgen.ConnOptions{})
	s := cn.Session(pcapgen.RequestHeader{ClientID: pcapgen.Ptr("orders-app"), InstanceID: &id, CorrelationID: 1})
	s.RoundTrip(pcapgen.APIVersions(4, "apache-kafka-java", "4.2.0"), pcapgen.APIVersionsResponse(4))
	s.Header.InstanceID = &other
	_, frame := s.Request(pcapgen.Metadata(12, "orders"))
	cn.Close()

	path := filepath.Join(os.TempDir(), "example-instance-id-changed.pcap")
	if err := c.WriteFile(path); err != nil {
		fmt.Println(err)
		return
	}
	defer os.Remove(path)
	fmt.Println("finding expected at frame", frame, "member ID", pcapgen.JavaString(id))
	// Output: finding expected at frame 10 member ID EBESExQVRheYGRobHB0eHw
}
