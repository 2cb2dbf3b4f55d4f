// Package apidoc holds no code: its tests keep pacer's public Go surface
// documented. Every package outside internal/, cmd/ and bench/ must have a
// package doc ("Package name …") and at least one Example that go test
// runs, and no Example may look as if it checked its output while go test
// only compiles it (a comment just above "// Output:" joins it, and the
// example then has no output to check).
package apidoc
