package mcp

import (
	"encoding/json"
	"strings"
)

// LatestProtocolVersion is the MCP revision the Client asks for; the SDK
// accepts any revision it supports from the server.
const LatestProtocolVersion = "2025-11-25"

// Implementation names a client or server program.
type Implementation struct {
	// Name identifies the program; Title is its display name, if any.
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// Capability describes one server feature; a nil *Capability in
// ServerCapabilities means the server does not offer the feature.
type Capability struct {
	// ListChanged reports that the server sends list_changed
	// notifications for this feature.
	ListChanged bool `json:"listChanged,omitempty"`
	// Subscribe reports that resources can be subscribed to.
	Subscribe bool `json:"subscribe,omitempty"`
}

// ServerCapabilities is what a server declared in its initialize result.
// Members the Client has no use for are kept raw.
type ServerCapabilities struct {
	// Tools, Prompts and Resources are nil when not offered.
	Tools     *Capability `json:"tools,omitempty"`
	Prompts   *Capability `json:"prompts,omitempty"`
	Resources *Capability `json:"resources,omitempty"`
	// Logging and Completions are non-nil when offered.
	Logging     json.RawMessage `json:"logging,omitempty"`
	Completions json.RawMessage `json:"completions,omitempty"`
	// Experimental holds non-standard capabilities by name.
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
}

// Tool is one entry of a server's tools/list.
type Tool struct {
	// Name is the raw tool name, as tools/call wants it; Title and
	// Description are for people and the model.
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// InputSchema is the JSON Schema of the arguments, exactly as the
	// server sent it.
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	// OutputSchema describes StructuredContent, when the tool has one.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Annotations are the server's hints; nil when it gave none.
	Annotations *ToolAnnotations `json:"annotations,omitempty"`
}

// ToolAnnotations are a server's hints about a tool. They are claims, not
// guarantees; nil pointers mean the server said nothing.
type ToolAnnotations struct {
	// Title is a display name.
	Title string `json:"title,omitempty"`
	// ReadOnlyHint claims the tool changes nothing.
	ReadOnlyHint *bool `json:"readOnlyHint,omitempty"`
	// DestructiveHint claims a writer may destroy data.
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	// IdempotentHint claims repeating a call changes nothing more.
	IdempotentHint *bool `json:"idempotentHint,omitempty"`
	// OpenWorldHint claims the tool reaches beyond the server.
	OpenWorldHint *bool `json:"openWorldHint,omitempty"`
}

// ReadOnly reports whether the server declared readOnlyHint true. A tool
// that says nothing is treated as a writer, since its effects are opaque.
func (t Tool) ReadOnly() bool {
	return t.Annotations != nil && t.Annotations.ReadOnlyHint != nil && *t.Annotations.ReadOnlyHint
}

// Destructive reports whether the server explicitly declared
// destructiveHint true on a tool that is not read-only. The protocol's own
// default for an unannotated writer is "may be destructive"; callers that
// want that reading check DestructiveHint themselves.
func (t Tool) Destructive() bool {
	if t.ReadOnly() || t.Annotations == nil || t.Annotations.DestructiveHint == nil {
		return false
	}
	return *t.Annotations.DestructiveHint
}

// DisplayTitle is the most human-friendly name the server gave the tool.
func (t Tool) DisplayTitle() string {
	switch {
	case t.Title != "":
		return t.Title
	case t.Annotations != nil && t.Annotations.Title != "":
		return t.Annotations.Title
	}
	return t.Name
}

// Content is one block of a tool result or prompt message. Type is text,
// image, audio, resource_link or resource; the other fields are set as the
// type requires.
type Content struct {
	// Type selects which of the fields below are meaningful.
	Type string `json:"type"`
	// Text is the text of a text block.
	Text string `json:"text,omitempty"`
	// Data is the base64 payload of an image or audio block.
	Data string `json:"data,omitempty"`
	// MIMEType qualifies Data, or the target of a resource link.
	MIMEType string `json:"mimeType,omitempty"`
	// URI, Name, Title, Description and Size describe a resource link.
	URI         string `json:"uri,omitempty"`
	Name        string `json:"name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Size        *int64 `json:"size,omitempty"`
	// Resource is the embedded resource of a resource block.
	Resource *ResourceContents `json:"resource,omitempty"`
	// Annotations (audience, priority) are kept raw.
	Annotations json.RawMessage `json:"annotations,omitempty"`
}

// ResourceContents is the content of one resource: Text for text
// resources, Blob (base64) for binary ones.
type ResourceContents struct {
	// URI names the resource; MIMEType qualifies its content.
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"`
}

// CallToolResult is the outcome of tools/call. IsError marks a failure the
// tool itself reported; it is meant for the model to read, unlike a
// protocol error, which Client.CallTool returns as an error.
type CallToolResult struct {
	// Content is what the tool returned, in order.
	Content []Content `json:"content"`
	// StructuredContent is the optional JSON result matching the tool's
	// output schema.
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	// IsError marks a failure reported by the tool.
	IsError bool `json:"isError,omitempty"`
}

// Text renders the result for a model: text blocks as they are, binary
// blocks as a short placeholder, resources with their URI and text. A
// result with structured content and no blocks renders the structured JSON.
func (r CallToolResult) Text() string {
	if len(r.Content) == 0 && len(r.StructuredContent) > 0 && !isNull(r.StructuredContent) {
		return string(compact(r.StructuredContent))
	}
	return renderContent(r.Content)
}

// Prompt is one entry of prompts/list.
type Prompt struct {
	// Name is what GetPrompt wants; Arguments lists what it accepts.
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
}

// PromptArgument is one argument a prompt accepts.
type PromptArgument struct {
	// Name is the argument's key; Required marks one GetPrompt needs.
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// PromptMessage is one message of a rendered prompt.
type PromptMessage struct {
	// Role is user or assistant.
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// GetPromptResult is a rendered prompt.
type GetPromptResult struct {
	// Description and Messages are the rendered prompt.
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
}

// Text renders the prompt's messages as plain text, one block per message.
func (r GetPromptResult) Text() string {
	parts := make([]string, 0, len(r.Messages))
	for _, m := range r.Messages {
		parts = append(parts, renderContent([]Content{m.Content}))
	}
	return strings.Join(parts, "\n\n")
}

// Resource is one entry of resources/list.
type Resource struct {
	// URI is what ReadResource wants; the rest describes it.
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	Size        *int64 `json:"size,omitempty"`
}

// ReadResourceResult is the outcome of resources/read.
type ReadResourceResult struct {
	// Contents may hold several parts of one resource.
	Contents []ResourceContents `json:"contents"`
}

// Progress is one notifications/progress update. Total is zero when the
// server does not know it.
type Progress struct {
	// Token is the raw JSON progress token the update refers to.
	Token json.RawMessage `json:"progressToken"`
	// Progress grows with every update; Total, when known, is its end;
	// Message describes the current step.
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
}

// ProgressFunc receives progress updates for one call. It runs on the
// Client's receive loop, so it must return promptly and must not call the
// Client.
type ProgressFunc func(Progress)

// ListKind names a list a server announced as changed.
type ListKind string

// The lists a server may announce as changed.
const (
	ListTools     ListKind = "tools"
	ListPrompts   ListKind = "prompts"
	ListResources ListKind = "resources"
)

// ElicitRequest is a server's elicitation/create request: a question for
// the user, with a JSON Schema for a form answer (mode "form", the default)
// or a URL to visit (mode "url").
type ElicitRequest struct {
	// Mode is "form" (or empty) or "url".
	Mode string `json:"mode,omitempty"`
	// Message is the question for the user.
	Message string `json:"message"`
	// RequestedSchema is the JSON Schema of the form's answer.
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	// URL and ElicitationID are set in url mode.
	URL           string `json:"url,omitempty"`
	ElicitationID string `json:"elicitationId,omitempty"`
}

// The actions an ElicitResult may carry.
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// ElicitResult is the user's answer: Action is accept, decline or cancel,
// and Content holds the form values of an accepted form.
type ElicitResult struct {
	// Action is ElicitAccept, ElicitDecline or ElicitCancel.
	Action string `json:"action"`
	// Content holds the answers of an accepted form.
	Content map[string]any `json:"content,omitempty"`
}
