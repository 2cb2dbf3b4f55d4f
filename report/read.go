package report

import (
	"encoding/json"
	"fmt"
	"io"
)

// ReadDocument decodes a pacer.result/v1 document (what --json writes) and
// checks its schema.
func ReadDocument(r io.Reader) (*Document, error) {
	var d Document
	dec := json.NewDecoder(r)
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("not a pacer result: %w", err)
	}
	if d.Schema != Schema {
		return nil, fmt.Errorf("not a pacer result: schema %q, want %q", d.Schema, Schema)
	}
	return &d, nil
}

// MaxDocumentSize bounds a result document ReadInputs reads: an hour of
// one-second intervals is a few MB.
const MaxDocumentSize = 256 << 20
