package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The link checker reads Markdown the way GitHub renders it, for what links
// need: fenced code blocks and code spans hold no links, headings give
// anchors by GitHub's slug rules. It fetches nothing: external links are
// left alone.

var (
	// mdLink is an inline link or image: [text](target "title").
	mdLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// mdRefDef is a reference definition: [label]: target.
	mdRefDef = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	// mdHeading is an ATX heading.
	mdHeading = regexp.MustCompile(`^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$`)
	// codeSpan is inline code, one or more backticks each side.
	codeSpan = regexp.MustCompile("(`+)[^`]*?(`+)")
	// linkText keeps a link's text, for headings that hold links.
	linkText = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	// scheme marks an external or non-file link (https:, mailto:).
	scheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// prose returns the lines of a Markdown document outside fenced code
// blocks, with their line numbers.
func prose(text string) (lines []string, numbers []int) {
	fence := ""
	for i, line := range strings.Split(text, "\n") {
		trim := strings.TrimSpace(line)
		switch {
		case fence != "":
			if strings.HasPrefix(trim, fence) && strings.Trim(trim, fence[:1]) == "" {
				fence = ""
			}
			continue
		case strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~"):
			fence = trim[:3]
			for _, c := range trim[3:] {
				if string(c) != fence[:1] {
					break
				}
				fence += string(c)
			}
			continue
		}
		lines, numbers = append(lines, line), append(numbers, i+1)
	}
	return lines, numbers
}

// slug is GitHub's anchor for a heading's text: lower case, inline markup
// gone, every character but letters, digits, '_' and '-' dropped, each
// space a '-'.
func slug(heading string) string {
	heading = linkText.ReplaceAllString(heading, "$1")
	heading = strings.ReplaceAll(heading, "`", "")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the anchors of a Markdown document's headings, with
// GitHub's -1, -2 … suffixes for repeated ones.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	count := map[string]int{}
	lines, _ := prose(text)
	for _, line := range lines {
		m := mdHeading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		s := slug(m[1])
		if n := count[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		count[s]++
	}
	return out
}

// docLinks returns the link targets of a Markdown document with their line
// numbers: inline links, images and reference definitions, outside code.
func docLinks(text string) (targets []string, numbers []int) {
	lines, nums := prose(text)
	for i, line := range lines {
		line = codeSpan.ReplaceAllString(line, "")
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			targets, numbers = append(targets, m[1]), append(numbers, nums[i])
		}
		if m := mdRefDef.FindStringSubmatch(line); m != nil {
			targets, numbers = append(targets, m[1]), append(numbers, nums[i])
		}
	}
	return targets, numbers
}

// TestDocLinks checks every relative link of README.md, CONTRIBUTING.md and
// docs/*.md: the file it names exists, and an #anchor is a heading of the
// Markdown file it points into. External links are not fetched.
func TestDocLinks(t *testing.T) {
	t.Parallel()
	texts := map[string]string{}
	read := func(path string) (string, bool) {
		if s, ok := texts[path]; ok {
			return s, true
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return "", false
		}
		texts[path] = string(b)
		return string(b), true
	}
	checked := 0
	for _, doc := range docFiles(t) {
		text, ok := read(doc)
		if !ok {
			t.Fatalf("cannot read %s", doc)
		}
		targets, lines := docLinks(text)
		for i, target := range targets {
			where := filepath.Base(doc) + ":" + strconv.Itoa(lines[i])
			if scheme.MatchString(target) || strings.HasPrefix(target, "//") {
				continue // external: not fetched
			}
			checked++
			path, frag, _ := strings.Cut(target, "#")
			if strings.HasPrefix(path, "/") {
				t.Errorf("%s: link %q is absolute: link relative to the document", where, target)
				continue
			}
			dest := doc
			if path != "" {
				dest = filepath.Join(filepath.Dir(doc), filepath.FromSlash(path))
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: link %q: no such file", where, target)
					continue
				}
			}
			if frag == "" {
				continue
			}
			if !strings.HasSuffix(dest, ".md") {
				t.Errorf("%s: link %q: an anchor into a file that is not Markdown", where, target)
				continue
			}
			destText, ok := read(dest)
			if !ok {
				t.Errorf("%s: link %q: cannot read %s", where, target, dest)
				continue
			}
			if !anchors(destText)[frag] {
				t.Errorf("%s: link %q: %s has no heading with the anchor #%s", where, target, filepath.Base(dest), frag)
			}
		}
	}
	if checked < 50 {
		t.Fatalf("checked %d relative links: the extraction is broken", checked)
	}
}

// TestDocLinkParsing pins the parts of the checker: GitHub's slugs of the
// headings these docs use, links outside code only, repeated headings.
func TestDocLinkParsing(t *testing.T) {
	t.Parallel()
	for heading, want := range map[string]string{
		"`pacer run` — the open model":                                            "pacer-run--the-open-model",
		"Output files (`--json`, `--hdr-log`, `--hdr-spectrum`)":                  "output-files---json---hdr-log---hdr-spectrum",
		"Reading `pacer run`'s output":                                            "reading-pacer-runs-output",
		"Redis Cluster (`run --cluster`)":                                         "redis-cluster-run---cluster",
		"JSON output (`pacer.result/v1`)":                                         "json-output-pacerresultv1",
		"Closed sweeps, Little's law and the knee":                                "closed-sweeps-littles-law-and-the-knee",
		"`intervals[]`":                                                           "intervals",
		"Each test (`tests[i]`)":                                                  "each-test-testsi",
		"Several machines, one timeline (`--shard`, `--start-at`, `pacer merge`)": "several-machines-one-timeline---shard---start-at-pacer-merge",
		"A [linked](x.md) heading":                                                "a-linked-heading",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
	doc := "# Words\n\n## Words\n\nSee [a](a.md#x) and `[b](b.md)`.\n\n```\n[c](c.md)\n```\n\n[ref]: d.md\n![img](img/e.png)\n"
	targets, lines := docLinks(doc)
	if got := strings.Join(targets, " "); got != "a.md#x d.md img/e.png" {
		t.Errorf("links %q", got)
	}
	if len(lines) != 3 || lines[0] != 5 || lines[1] != 11 {
		t.Errorf("lines %v", lines)
	}
	if a := anchors(doc); !a["words"] || !a["words-1"] || len(a) != 2 {
		t.Errorf("anchors %v", a)
	}
}

// TestReadmeIsAFrontPage keeps the README short: what pacer is, how to
// install it, the first commands and links; the rest belongs in docs/.
func TestReadmeIsAFrontPage(t *testing.T) {
	t.Parallel()
	text, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(text), "\n"); n >= 300 {
		t.Errorf("README.md has %d lines: keep it under 300 and move the rest to docs/", n)
	}
}
