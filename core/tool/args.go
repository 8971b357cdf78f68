package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// DecodeArgs unmarshals the raw JSON arguments of tool name into v, a
// pointer to a struct. It exists so a model's malformed call produces an
// error it can act on, such as `read_file: "path" is required` or
// `read_file: "offset" must be an integer, got string`, instead of a Go
// decoding message.
//
// Unknown fields are ignored: models often add harmless extras. A field
// tagged `arg:"required"` must be present and not null; the check descends
// into nested structs and slices of structs, numbering array items from 1.
// Prefer spelled-out fields to embedded structs in argument types: type
// errors would name an embedded field by its Go path, not its JSON key.
// Empty or null arguments decode as {}. Arguments wrapped in a JSON string
// (a double-encoded object, which some models send) are unwrapped once.
func DecodeArgs(name string, raw json.RawMessage, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	if raw[0] == '"' {
		var inner string
		if err := json.Unmarshal(raw, &inner); err == nil {
			raw = bytes.TrimSpace([]byte(inner))
		}
	}
	if len(raw) == 0 || raw[0] != '{' {
		return fmt.Errorf("%s: arguments must be a JSON object", name)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fmt.Errorf("%s: %q must be %s, got %s", name, te.Field, jsonKind(te.Type), te.Value)
		}
		return fmt.Errorf("%s: arguments are not valid JSON: %w", name, err)
	}
	if err := checkRequired(raw, reflect.TypeOf(v).Elem()); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// checkRequired verifies that every `arg:"required"` field of struct type t
// is present and non-null in the JSON object raw, recursing into nested
// objects and arrays of objects. raw has already decoded into t, so its shape
// is known to match.
func checkRequired(raw json.RawMessage, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil // null or not an object: nothing to check at this level
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Tag.Get("json") == "" {
			// encoding/json promotes an untagged embedded struct's fields
			// into this object, so check them at this level.
			if err := checkRequired(raw, f.Type); err != nil {
				return err
			}
			continue
		}
		key, ok := jsonName(f)
		if !ok {
			continue
		}
		val, present := obj[key]
		if !present || bytes.Equal(bytes.TrimSpace(val), []byte("null")) {
			if f.Tag.Get("arg") == "required" {
				return fmt.Errorf("%q is required", key)
			}
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch ft.Kind() {
		case reflect.Struct:
			if err := checkRequired(val, ft); err != nil {
				return fmt.Errorf("%q: %w", key, err)
			}
		case reflect.Slice, reflect.Array:
			var items []json.RawMessage
			if err := json.Unmarshal(val, &items); err != nil {
				continue
			}
			for n, item := range items {
				if err := checkRequired(item, ft.Elem()); err != nil {
					return fmt.Errorf("%q item %d: %w", key, n+1, err)
				}
			}
		}
	}
	return nil
}

// jsonName is the object key encoding/json uses for f, and false for fields
// it skips.
func jsonName(f reflect.StructField) (string, bool) {
	if !f.IsExported() {
		return "", false
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	if name, _, _ := strings.Cut(tag, ","); name != "" {
		return name, true
	}
	return f.Name, true
}

// jsonKind names the JSON type a Go type decodes from, with its article, for
// messages addressed to the model.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	default:
		return "a " + t.Kind().String()
	}
}
