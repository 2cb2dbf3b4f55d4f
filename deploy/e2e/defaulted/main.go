// Command defaulted prints what an apiserver added to a manifest: the
// fields of the object as stored (kubectl apply --dry-run=server -o yaml)
// that the manifest does not set, one "path: value" a line, in path
// order, leaving out what every object gets (uid, resourceVersion,
// creationTimestamp, generation, managedFields, the last-applied
// annotation) and status. Usage:
//
//	defaulted MANIFEST.yaml STORED.yaml
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"

	"sigs.k8s.io/yaml"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "defaulted: want MANIFEST.yaml STORED.yaml")
		os.Exit(2)
	}
	lines, err := defaulted(os.Args[1], os.Args[2])
	if err != nil {
		fmt.Fprintf(os.Stderr, "defaulted: %v\n", err)
		os.Exit(2)
	}
	for _, l := range lines {
		fmt.Println(l)
	}
}

// ignored are the paths every stored object has, whatever its manifest.
var ignored = []string{
	".metadata.uid", ".metadata.resourceVersion", ".metadata.creationTimestamp", ".metadata.generation",
	".metadata.managedFields", ".metadata.annotations.kubectl.kubernetes.io/last-applied-configuration", ".status",
}

func defaulted(manifestPath, storedPath string) ([]string, error) {
	manifest, err := load(manifestPath)
	if err != nil {
		return nil, err
	}
	stored, err := load(storedPath)
	if err != nil {
		return nil, err
	}
	var out []string
	added("", manifest, stored, &out)
	slices.Sort(out)
	return out, nil
}

func load(path string) (any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// added appends the leaves of stored under path that have no counterpart
// in manifest; lists are matched by position.
func added(path string, manifest, stored any, out *[]string) {
	if slices.Contains(ignored, path) {
		return
	}
	switch s := stored.(type) {
	case map[string]any:
		m, _ := manifest.(map[string]any)
		if len(s) == 0 && manifest == nil {
			*out = append(*out, path+": {}")
		}
		for k, v := range s {
			var mv any
			if m != nil {
				mv = m[k]
			}
			added(path+"."+k, mv, v, out)
		}
	case []any:
		m, _ := manifest.([]any)
		if len(s) == 0 && manifest == nil {
			*out = append(*out, path+": []")
		}
		for i, v := range s {
			var mv any
			if i < len(m) {
				mv = m[i]
			}
			added(path+"["+strconv.Itoa(i)+"]", mv, v, out)
		}
	default:
		if manifest == nil {
			b, _ := json.Marshal(s)
			*out = append(*out, path+": "+string(b))
		}
	}
}
