// Package workerpb holds the protobuf twins of the messages a scheduler
// and a `reasonix worker` exchange (actors/remote/msgs.go), generated
// from worker.proto into worker.pb.go. protoactor remote puts only
// protobuf messages on the wire, so every boundary message has a twin
// here; the actors themselves handle the plain Go values.
//
// Only actors/remote/wire.go imports this package: it maps each plain
// message to its twin and back, so the rest of the code never depends on
// generated types. The schema only grows (see the comment in
// worker.proto); `make proto` regenerates worker.pb.go, and
// generate_test.go fails when the committed file is stale.
package workerpb
