// Package realclients is kwatch's test against Kafka client libraries other
// than franz-go: kcat and confluent-kafka-python (both librdkafka 2.0.2),
// kafkajs 2.2.4, a pure-JavaScript client with its own protocol code, and
// two Go libraries with their own protocol code, IBM/sarama and
// segmentio/kafka-go.
//
// Each test starts franz-go's kfake broker on 127.0.0.1, captures loopback
// with kwatch's own live capture (capture.OpenLive, so it needs root or
// CAP_NET_RAW) into a pcapng file while the real client runs (a subprocess
// under a timeout; the Go libraries on a goroutine, each step bounded the
// same way), and then checks that file three ways: kwatch's
// pipeline and auditor, tshark's Kafka dissector, and the requests kfake's
// control hook saw. The findings each library must produce come from reading
// its source and its traffic; FINDINGS.md says what was found and why.
//
// A missing client tool skips its test with the install command to run;
// under CI=true a missing tool fails it.
//
// Everything lives in _test.go files: this package exports nothing. Like
// package e2e it reads the wall clock, because its packets are real traffic.
//
// Concurrency: one goroutine per live capture drains packets into the
// pcapng writer; kfake's control hook counts under a mutex; a Go client
// step runs on its own goroutine and hands back only its error (sarama's
// consumer handler collects under a mutex). Nothing else is shared between
// goroutines.
package realclients
