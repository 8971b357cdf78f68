// Package providertest is a scripted stand-in for an OpenAI-compatible
// chat-completions endpoint. It runs a real HTTP server on 127.0.0.1 and
// answers with the same streaming wire format the DeepSeek and OpenAI APIs
// use: "data: {json}" chunk events (id, object "chat.completion.chunk",
// created, model, choices with index, delta and finish_reason), a usage
// chunk when the request asks for stream_options.include_usage, and a final
// "data: [DONE]". Because it is a real server, everything between the
// caller and the socket (retries, timeouts, connection reuse) is exercised
// too.
//
// A test scripts the replies as Turns. Turns queued with Push are consumed
// one per chat request, in arrival order; once the queue is empty a
// responder installed with WithResponder picks the reply from the request
// itself, which is how tests with many concurrent callers (a fleet of
// subagents arriving in any order) stay deterministic. With neither, the
// server answers 500 "fake: no scripted turn left" so a missing script is
// an obvious failure rather than a hang. Turns are plain JSON-serialisable
// data, so longer scripts can live in testdata and be read with LoadScript.
//
// Turns also carry fault knobs: an HTTP error status with Retry-After,
// latency before the headers, a delay between events, an abrupt connection
// cut, a malformed chunk, an in-stream error object, and a stall that holds
// the connection open without sending a byte. Waits use timers and end as
// soon as the client goes away or the server is closed, so a test with
// dozens of slow concurrent streams stays cheap.
//
// WithThinkingMode makes the server as strict as DeepSeek's thinking mode:
// once it has streamed tool calls together with reasoning, every later
// request must send that reasoning back on the assistant message carrying
// those calls, or it is answered 400 with DeepSeek's error object.
//
// Every chat request is recorded (raw body, headers, arrival time and a
// parsed view of the model, messages and tools) and can be inspected with
// Requests, Count and WaitRequests.
//
// In a unit test, Start the server and point a provider at URL:
//
//	srv := providertest.Start(t)
//	srv.Push(providertest.Turn{Text: "hello"})
//	cfg := provider.Config{Kind: "openai", BaseURL: srv.URL(), Model: "fake-model"}
//
// In an end-to-end test, start the server in the test process, write a
// temporary config whose provider base_url is srv.URL() (with api_key_env
// naming a variable the test sets, checked with WithAPIKey if desired), and
// run the real reasonix binary against that config. The binary's requests
// arrive at the fake over loopback and can be asserted on afterwards.
package providertest
