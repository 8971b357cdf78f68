package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// JSON-RPC 2.0 error codes. The first five are the standard's; the last is
// the value MCP SDKs use for a connection that closed before the response.
const (
	CodeParseError       = -32700
	CodeInvalidRequest   = -32600
	CodeMethodNotFound   = -32601
	CodeInvalidParams    = -32602
	CodeInternalError    = -32603
	CodeConnectionClosed = -32000
)

// ErrInvalidMessage is wrapped by every error DecodeMessage and
// DecodeMessages return for input that is not a JSON-RPC 2.0 message.
var ErrInvalidMessage = errors.New("invalid json-rpc message")

// wireError is a JSON-RPC error object. It is also the error Client.Call
// returns when the server answers with an error, so callers can inspect the
// code with errors.As.
type wireError struct {
	// Code is one of the Code constants or a server-defined value.
	Code int `json:"code"`
	// Message is a short description for people.
	Message string `json:"message"`
	// Data is optional detail, kept raw.
	Data json.RawMessage `json:"data,omitempty"`
}

// Error formats the code and message.
func (e *wireError) Error() string {
	return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message)
}

// Kind tells the three JSON-RPC message shapes apart.
type Kind int

// The message kinds.
const (
	// KindRequest has a method and an id and expects a response.
	KindRequest Kind = iota + 1
	// KindNotification has a method and no id; nobody answers it.
	KindNotification
	// KindResponse has an id and either a result or an error.
	KindResponse
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case KindRequest:
		return "request"
	case KindNotification:
		return "notification"
	case KindResponse:
		return "response"
	}
	return "invalid"
}

// Message is one JSON-RPC 2.0 message of any kind. ID holds the raw JSON of
// the id: the Client numbers its own requests, while a server's ids may be
// any JSON value and are echoed back byte for byte. Params and Result are
// raw JSON so each layer decodes only what it understands.
type Message struct {
	// ID is nil for a notification and "null" only in an error response
	// to a request whose id could not be read.
	ID json.RawMessage
	// Method and Params are set on requests and notifications.
	Method string
	Params json.RawMessage
	// Result or Error is set on a response, never both.
	Result json.RawMessage
	Error  *wireError
}

// Kind reports which of the three shapes m has.
func (m Message) Kind() Kind {
	switch {
	case m.Method != "" && m.ID != nil:
		return KindRequest
	case m.Method != "":
		return KindNotification
	default:
		return KindResponse
	}
}

// wireMessage is the JSON form of a Message.
type wireMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *wireError      `json:"error,omitempty"`
}

// MarshalJSON writes m with the "jsonrpc":"2.0" member. A response without
// an error always carries a result, {} when none was set. Raw members are
// written as they are, without HTML escaping, so that an id is echoed
// byte for byte; transports call it directly rather than through
// json.Marshal, which would escape them again.
func (m Message) MarshalJSON() ([]byte, error) {
	w := wireMessage{JSONRPC: "2.0", ID: m.ID, Method: m.Method, Params: m.Params, Result: m.Result, Error: m.Error}
	if m.Method == "" && m.Error == nil && len(m.Result) == 0 {
		w.Result = json.RawMessage(`{}`)
	}
	if m.Method == "" && w.ID == nil {
		w.ID = json.RawMessage(`null`)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// NewRequest builds a request with a numeric id. params may be nil, a
// json.RawMessage or any value encoding/json can marshal to an object.
func NewRequest(id int64, method string, params any) (Message, error) {
	p, err := marshalParams(params)
	if err != nil {
		return Message{}, fmt.Errorf("request %s: %w", method, err)
	}
	return Message{ID: json.RawMessage(strconv.FormatInt(id, 10)), Method: method, Params: p}, nil
}

// NewNotification builds a notification.
func NewNotification(method string, params any) (Message, error) {
	p, err := marshalParams(params)
	if err != nil {
		return Message{}, fmt.Errorf("notification %s: %w", method, err)
	}
	return Message{Method: method, Params: p}, nil
}

// NewResponse builds a success response to the request with the given id.
func NewResponse(id json.RawMessage, result any) (Message, error) {
	r, err := marshalParams(result)
	if err != nil {
		return Message{}, fmt.Errorf("response: %w", err)
	}
	if r == nil {
		r = json.RawMessage(`{}`)
	}
	return Message{ID: id, Result: r}, nil
}

// NewErrorResponse builds an error response to the request with the given
// id.
func NewErrorResponse(id json.RawMessage, code int, message string) Message {
	return Message{ID: id, Error: &wireError{Code: code, Message: message}}
}

func marshalParams(v any) (json.RawMessage, error) {
	switch p := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		if len(bytes.TrimSpace(p)) == 0 {
			return nil, nil
		}
		return p, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// rawMessage captures which members are present, which the typed Message
// cannot: an absent id and "id":null mean different things.
type rawMessage struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// DecodeMessage parses and validates one JSON-RPC 2.0 message. It requires
// "jsonrpc":"2.0", a non-empty method for requests and notifications, a
// non-null id for requests, and exactly one of result and error for
// responses. A null params member counts as absent.
func DecodeMessage(data []byte) (Message, error) {
	var r rawMessage
	if err := json.Unmarshal(data, &r); err != nil {
		return Message{}, fmt.Errorf("%w: %w", ErrInvalidMessage, err)
	}
	if r.JSONRPC == nil || *r.JSONRPC != "2.0" {
		return Message{}, fmt.Errorf("%w: jsonrpc member is not \"2.0\"", ErrInvalidMessage)
	}
	params := r.Params
	if isNull(params) {
		params = nil
	}
	if params != nil && !isStructured(params) {
		return Message{}, fmt.Errorf("%w: params is neither an object nor an array", ErrInvalidMessage)
	}
	if r.Method != nil {
		if *r.Method == "" {
			return Message{}, fmt.Errorf("%w: empty method", ErrInvalidMessage)
		}
		if r.Result != nil || r.Error != nil {
			return Message{}, fmt.Errorf("%w: %q carries a result or error", ErrInvalidMessage, *r.Method)
		}
		if r.ID != nil && isNull(r.ID) {
			return Message{}, fmt.Errorf("%w: request %q has a null id", ErrInvalidMessage, *r.Method)
		}
		return Message{ID: compact(r.ID), Method: *r.Method, Params: params}, nil
	}
	if r.ID == nil {
		return Message{}, fmt.Errorf("%w: neither method nor id", ErrInvalidMessage)
	}
	if params != nil {
		return Message{}, fmt.Errorf("%w: response carries params", ErrInvalidMessage)
	}
	switch {
	case r.Result != nil && r.Error != nil:
		return Message{}, fmt.Errorf("%w: response has both result and error", ErrInvalidMessage)
	case r.Result != nil:
		if isNull(r.ID) {
			return Message{}, fmt.Errorf("%w: success response has a null id", ErrInvalidMessage)
		}
		return Message{ID: compact(r.ID), Result: r.Result}, nil
	case r.Error != nil:
		e, err := decodeError(r.Error)
		if err != nil {
			return Message{}, err
		}
		return Message{ID: compact(r.ID), Error: e}, nil
	}
	return Message{}, fmt.Errorf("%w: response has neither result nor error", ErrInvalidMessage)
}

// DecodeMessages parses either one message or a batch (a JSON array of
// messages, which protocol version 2025-03-26 allowed). An empty batch is
// invalid.
func DecodeMessages(data []byte) ([]Message, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '[' {
		m, err := DecodeMessage(data)
		if err != nil {
			return nil, err
		}
		return []Message{m}, nil
	}
	var batch []json.RawMessage
	if err := json.Unmarshal(data, &batch); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidMessage, err)
	}
	if len(batch) == 0 {
		return nil, fmt.Errorf("%w: empty batch", ErrInvalidMessage)
	}
	out := make([]Message, 0, len(batch))
	for i, raw := range batch {
		m, err := DecodeMessage(raw)
		if err != nil {
			return nil, fmt.Errorf("batch element %d: %w", i, err)
		}
		out = append(out, m)
	}
	return out, nil
}

func decodeError(raw json.RawMessage) (*wireError, error) {
	var e struct {
		Code    *json.Number    `json:"code"`
		Message *string         `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, fmt.Errorf("%w: error member: %w", ErrInvalidMessage, err)
	}
	if e.Code == nil || e.Message == nil {
		return nil, fmt.Errorf("%w: error member lacks code or message", ErrInvalidMessage)
	}
	code, err := e.Code.Int64()
	if err != nil || code != int64(int(code)) {
		return nil, fmt.Errorf("%w: error code %s is not an integer", ErrInvalidMessage, e.Code.String())
	}
	data := e.Data
	if isNull(data) {
		data = nil
	}
	return &wireError{Code: int(code), Message: *e.Message, Data: data}, nil
}

func isStructured(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && (t[0] == '{' || t[0] == '[')
}

// idKey turns an id into a map key. Numbers are normalised (1, 1.0 and 1e0
// are the same id) and kept apart from strings ("1" is another id).
func idKey(raw json.RawMessage) string {
	raw = compact(raw)
	if len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')) {
		if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
			if f == float64(int64(f)) {
				return strconv.FormatInt(int64(f), 10)
			}
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
	}
	return string(raw)
}
