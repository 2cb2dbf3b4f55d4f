package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestDefaulted: the fields the stored object has and the manifest does
// not, by path, lists matched by position; what every object gets is
// left out.
func TestDefaulted(t *testing.T) {
	dir := t.TempDir()
	manifest := filepath.Join(dir, "m.yaml")
	stored := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(manifest, []byte(`# a comment
kind: Job
metadata:
  name: x
spec:
  template:
    spec:
      containers:
        - name: a
          args: ["run"]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stored, []byte(`kind: Job
metadata:
  name: x
  uid: 1234
  resourceVersion: "5"
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: "{}"
spec:
  backoffLimit: 6
  template:
    metadata: {}
    spec:
      dnsPolicy: ClusterFirst
      containers:
        - name: a
          args: ["run"]
          terminationMessagePath: /dev/termination-log
          resources: {}
status: {active: 1}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := defaulted(manifest, stored)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`.spec.backoffLimit: 6`,
		`.spec.template.metadata: {}`,
		`.spec.template.spec.containers[0].resources: {}`,
		`.spec.template.spec.containers[0].terminationMessagePath: "/dev/termination-log"`,
		`.spec.template.spec.dnsPolicy: "ClusterFirst"`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}
