// Command writecorpus writes kwatch's compliance corpus: for every scenario
// of internal/corpus, NAME.pcap (or .pcapng) and NAME.expected.json.
//
//	go run ./internal/corpus/cmd/writecorpus -out testdata/pcaps
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/kwatch/kwatch/internal/corpus"
)

func main() {
	out := flag.String("out", "", "directory to write the captures and expectations into")
	list := flag.Bool("list", false, "list the scenarios instead of writing them")
	flag.Parse()
	if *list {
		for _, s := range corpus.Scenarios() {
			fmt.Printf("%-50s %s\n", s.FileName(), s.Doc)
		}
		return
	}
	if *out == "" {
		fmt.Fprintln(os.Stderr, "writecorpus: give -out DIR")
		os.Exit(2)
	}
	if err := corpus.WriteAll(*out); err != nil {
		fmt.Fprintln(os.Stderr, "writecorpus:", err)
		os.Exit(1)
	}
}
