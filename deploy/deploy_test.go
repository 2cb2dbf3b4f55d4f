// Package deploy holds pacer's container image recipe and Kubernetes
// manifests. It is a module of its own so that the Kubernetes API types its
// tests decode the manifests into stay out of pacer's module.
package deploy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// render runs kubernetes/render.sh with args.
func render(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command("bash", append([]string{"kubernetes/render.sh"}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// fixedArgs render a Job whose arguments are known: a start and a seed.
var fixedArgs = []string{"-n", "4", "-h", "redis.load.svc", "-p", "6380", "--image", "registry.example/pacer:1.0",
	"--name", "pacer-get", "--start-at", "2030-01-02T15:04:05Z", "--",
	"--rate", "100k", "--duration", "5m", "-t", "get", "-r", "1000000", "--seed", "42", "--command", `SET k "v"`}

// TestJobDecodesStrictly: the rendered manifest is a batch/v1 Job with no
// field the API does not know, an Indexed Job of N completions run all at
// once, whose pods run the arguments render.sh --args prints.
func TestJobDecodesStrictly(t *testing.T) {
	manifest, stderr, err := render(t, fixedArgs...)
	if err != nil {
		t.Fatalf("render.sh: %v\n%s", err, stderr)
	}
	if strings.Contains(manifest, "${") {
		t.Fatalf("a field was left unrendered:\n%s", manifest)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(manifest), &job); err != nil {
		t.Fatalf("strict decoding: %v", err)
	}
	s := job.Spec
	switch {
	case job.APIVersion != "batch/v1" || job.Kind != "Job" || job.Name != "pacer-get":
		t.Errorf("apiVersion %q kind %q name %q", job.APIVersion, job.Kind, job.Name)
	case s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion:
		t.Errorf("completionMode %v, want Indexed", s.CompletionMode)
	case s.Completions == nil || s.Parallelism == nil || *s.Completions != 4 || *s.Parallelism != 4:
		t.Errorf("completions %v parallelism %v, want 4 and 4", s.Completions, s.Parallelism)
	case s.BackoffLimitPerIndex == nil || *s.BackoffLimitPerIndex != 0:
		t.Errorf("backoffLimitPerIndex %v, want 0: a retried shard would start after --start-at", s.BackoffLimitPerIndex)
	case s.Template.Spec.RestartPolicy != corev1.RestartPolicyNever:
		t.Errorf("restartPolicy %q", s.Template.Spec.RestartPolicy)
	case len(s.Template.Spec.Containers) != 1:
		t.Fatalf("%d containers", len(s.Template.Spec.Containers))
	}
	c := s.Template.Spec.Containers[0]
	psc := s.Template.Spec.SecurityContext
	if c.Image != "registry.example/pacer:1.0" || psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot ||
		c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
		t.Errorf("image %q, pod security %+v, container security %+v", c.Image, psc, c.SecurityContext)
	}
	if _, ok := c.Resources.Limits[corev1.ResourceCPU]; ok {
		t.Error("a CPU limit would throttle the sends")
	}
	if c.ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("imagePullPolicy %q, want IfNotPresent by default", c.ImagePullPolicy)
	}
	// pacer never calls the API: no token; a shard that exits early (its
	// start had passed) says why in its status.
	if a := s.Template.Spec.AutomountServiceAccountToken; a == nil || *a {
		t.Errorf("automountServiceAccountToken %v, want false", a)
	}
	if c.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError {
		t.Errorf("terminationMessagePolicy %q, want FallbackToLogsOnError", c.TerminationMessagePolicy)
	}
	want, stderr, err := render(t, append([]string{"--args"}, fixedArgs...)...)
	if err != nil {
		t.Fatalf("render.sh --args: %v\n%s", err, stderr)
	}
	if got := strings.Join(c.Args, "\n") + "\n"; got != want {
		t.Fatalf("the pod runs\n%s\nrender.sh --args prints\n%s", got, want)
	}
	for _, pair := range [][2]string{{"--shard", "auto/4"}, {"--start-at", "2030-01-02T15:04:05Z"}, {"--json", "-"}, {"-h", "redis.load.svc"}, {"--command", `SET k "v"`}, {"--seed", "42"}} {
		i := slices.Index(c.Args, pair[0])
		if i < 0 || i+1 >= len(c.Args) || c.Args[i+1] != pair[1] {
			t.Errorf("args %q: want %s %s", c.Args, pair[0], pair[1])
		}
	}
	if c.Args[0] != "run" || !slices.Contains(c.Args, "-q") {
		t.Errorf("args %q: want pacer run, quiet", c.Args)
	}
	// Strictness is real: a misspelt field is refused.
	bad := strings.Replace(manifest, "parallelism:", "paralellism:", 1)
	if err := yaml.UnmarshalStrict([]byte(bad), &batchv1.Job{}); err == nil {
		t.Error("a misspelt field was accepted")
	}
}

// TestRenderRefuses: render.sh refuses what would make a broken Job.
func TestRenderRefuses(t *testing.T) {
	for _, args := range [][]string{
		{"-h", "x"},            // no -n
		{"-n", "0", "-h", "x"}, // no shard
		{"-n", "2"},            // no target
		{"-n", "2", "-h", "x", "--name", "Pacer_1"}, // not a Kubernetes name
		{"-n", "2", "-h", "x", "--", "--shard", "1/2"},
		{"-n", "2", "-h", "x", "--", "--start-in", "5s"},
		{"-n", "2", "-h", "x", "--", "--json", "out.json"},
		{"-n", "2", "-h", "x", "--rate", "1k"}, // pacer's flags go after --
		{"-n", "2", "-h", "x", "--pull-policy", "never"},
	} {
		if _, stderr, err := render(t, args...); err == nil || !strings.HasPrefix(stderr, "render.sh: ") {
			t.Errorf("render.sh %q: %v, %q; want a refusal", args, err, stderr)
		}
	}
	// Images loaded on the nodes beforehand: --pull-policy Never.
	out, stderr, err := render(t, "-n", "2", "-h", "x", "--pull-policy", "Never")
	var job batchv1.Job
	if err != nil || yaml.UnmarshalStrict([]byte(out), &job) != nil || job.Spec.Template.Spec.Containers[0].ImagePullPolicy != corev1.PullNever {
		t.Errorf("--pull-policy Never: %v %s\n%s", err, stderr, out)
	}
	// Without --seed render.sh draws one, the same for every pod.
	out, _, err = render(t, "-n", "2", "-h", "x", "--args", "--", "--rate", "1k")
	if err != nil || !regexp.MustCompile(`\n--seed\n[0-9]+\n`).MatchString(out) {
		t.Errorf("no seed drawn: %v\n%s", err, out)
	}
}

// TestDockerfile: a multi-stage build of a static binary, on distroless
// static, run as non-root, with the Go of pacer's go.mod.
func TestDockerfile(t *testing.T) {
	df, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goVer := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(mod)
	from := regexp.MustCompile(`(?m)^FROM (\S+)`).FindAllSubmatch(df, -1)
	if goVer == nil || len(from) != 2 {
		t.Fatalf("go.mod go %q, %d FROM lines", goVer, len(from))
	}
	if build := string(from[0][1]); build != "golang:"+string(goVer[1]) {
		t.Errorf("builds with %s, go.mod says go %s", build, goVer[1])
	}
	if final := string(from[1][1]); !strings.HasPrefix(final, "gcr.io/distroless/static") || !strings.HasSuffix(final, ":nonroot") {
		t.Errorf("runs on %s, want distroless static, nonroot", final)
	}
	for _, want := range []string{"CGO_ENABLED=0", "\nUSER 65532:65532\n", `ENTRYPOINT ["/pacer"]`, "./cmd/pacer"} {
		if !bytes.Contains(df, []byte(want)) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
}

// TestLocalShardsAsTheJob: local-shards.sh runs three shards with the
// Job's arguments against one target (pacer serve on loopback), collects
// their JSON from their logs as the README says, and merges it: the
// merged result schedules exactly the timeline's requests.
func TestLocalShardsAsTheJob(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds pacer and runs three shards")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "pacer")
	build := exec.Command("go", "build", "-o", bin, "./cmd/pacer")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	serve := exec.CommandContext(ctx, bin, "serve", "--port", "0")
	pipe, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	serve.Stderr = serve.Stdout
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = serve.Process.Kill(); _ = serve.Wait() }()
	lines := bufio.NewScanner(pipe)
	addr := ""
	for addr == "" && lines.Scan() {
		if m := regexp.MustCompile(`listening on 127\.0\.0\.1:(\d+)`).FindStringSubmatch(lines.Text()); m != nil {
			addr = m[1]
		}
	}
	if addr == "" {
		t.Fatal("pacer serve did not say where it listens")
	}
	go func() {
		for lines.Scan() { // keep the pipe drained
		}
	}()
	merged := filepath.Join(dir, "merged.json")
	// A start 2 s ahead, then 10 s: on a starved machine (CI runs this
	// test at nice 19 beside others) the shards may start after the
	// instant, which each refuses with exit 2, as it should.
	for _, startIn := range []string{"2", "10"} {
		run := exec.CommandContext(ctx, "bash", "local-shards.sh", "-n", "3", "-h", "127.0.0.1", "-p", addr, "--start-in", startIn, "-o", merged,
			"--", "--rate", "3k", "-n", "1501", "-t", "get", "-c", "2", "--lag-limit", "1s", "--drain", "2s")
		run.Env = append(os.Environ(), "PACER="+bin, "TMPDIR="+dir)
		out, err := run.CombinedOutput()
		if err == nil {
			break
		}
		if startIn == "2" && strings.Contains(string(out), "has passed") {
			t.Logf("the shards started after --start-in 2 s (a starved machine): again with 10 s\n%s", out)
			continue
		}
		t.Fatalf("local-shards.sh --start-in %s: %v\n%s", startIn, err, out)
	}
	b, err := os.ReadFile(merged)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema string `json:"schema"`
		Shard  struct {
			N      int   `json:"n"`
			Merged []int `json:"merged"`
		} `json:"shard"`
		StartAt string `json:"start_at"`
		Tests   []struct {
			Counts map[string]uint64 `json:"counts"`
		} `json:"tests"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != "pacer.result/v1" || doc.Shard.N != 3 || !slices.Equal(doc.Shard.Merged, []int{1, 2, 3}) || doc.StartAt == "" || len(doc.Tests) != 1 {
		t.Fatalf("merged document: %s", b[:min(len(b), 400)])
	}
	if c := doc.Tests[0].Counts; c["scheduled"] != 1501 || c["completed"] != 1501 {
		t.Fatalf("merged counts %v, want the timeline's 1501 requests", c)
	}
}

// TestE2EScripts: deploy/e2e's scripts parse, and run.sh refuses to start
// beside a kubeconfig other than its own, before it makes or starts
// anything (its cache, which it would otherwise clear, is a temporary
// directory here).
func TestE2EScripts(t *testing.T) {
	for _, s := range []string{"e2e/lib.sh", "e2e/run.sh", "e2e/dryrun.sh"} {
		if out, err := exec.Command("bash", "-n", s).CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", s, err, out)
		}
	}
	cache := t.TempDir()
	cmd := exec.Command("bash", "e2e/run.sh")
	// Without Go on the PATH (Go is not in /usr/bin here), a run.sh that
	// failed to refuse would stop at its next check, not build a cluster.
	cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(cache, "elsewhere"), "PACER_E2E_CACHE="+cache, "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
	out, err := cmd.CombinedOutput()
	want := "KUBECONFIG is set"
	if os.Geteuid() != 0 {
		want = "run as root"
	}
	if err == nil || !strings.Contains(string(out), want) {
		t.Fatalf("run.sh with KUBECONFIG set: %v, want a refusal (%q)\n%s", err, want, out)
	}
	var made []string
	_ = filepath.WalkDir(cache, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && p != filepath.Join(cache, "last-run", "e2e.log") {
			made = append(made, p)
		}
		return nil
	})
	if len(made) > 0 {
		t.Errorf("run.sh made %q before refusing (its log alone is expected)", made)
	}
}
