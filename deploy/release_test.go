package deploy

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// gitOutput runs git in the repository root.
func gitOutput(t *testing.T, args ...string) string {
	t.Helper()
	return strings.TrimSpace(string(run(t, "..", "git", args...)))
}

var revisionLine = regexp.MustCompile(`revision: ([0-9a-f]+(?:-modified)?)\)`)

// TestPlainGoBuildReportsItsRevision builds the router with a plain
// `go build` in a fresh clone of the current commit, as a user would after
// `git clone`. The clone matters: the go command stamps VCS information only
// where .git is a directory, not in a `git worktree` (whose .git is a file).
// GOFLAGS=-buildvcs=auto undoes a -buildvcs=false a machine may set in its
// go env.
func TestPlainGoBuildReportsItsRevision(t *testing.T) {
	t.Parallel() // builds and promtool runs dominate the package's time; overlap them
	if testing.Short() {
		t.Skip("-short: not building the router")
	}
	tool(t, "git")
	clone := filepath.Join(t.TempDir(), "src")
	run(t, "..", "git", "clone", "--quiet", "--no-checkout", ".", clone)
	head := gitOutput(t, "rev-parse", "HEAD")
	run(t, clone, "git", "checkout", "--quiet", "--detach", head)
	bin := filepath.Join(t.TempDir(), "router")
	build := exec.Command("go", "build", "-o", bin, "./cmd/router")
	build.Dir = clone
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=auto")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build in a clone: %v\n%s", err, out)
	}
	v := string(run(t, "", bin, "version"))
	m := revisionLine.FindStringSubmatch(v)
	if m == nil || m[1] != head {
		t.Errorf("`router version` of a plain go build = %q, want revision %s (from the build info)", v, head)
	}
	if strings.Contains(v, "version (devel)") || strings.Contains(v, "version ,") {
		t.Errorf("`router version` of a plain go build has no module version: %q", v)
	}
	commitTime, err := strconv.ParseInt(gitOutput(t, "log", "-1", "--format=%ct"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if date := time.Unix(commitTime, 0).UTC().Format("20060102-15:04:05"); !strings.Contains(v, "build date:       "+date+"\n") {
		t.Errorf("`router version` of a plain go build = %q, want the commit time %s as build date", v, date)
	}
}

// TestReleaseArchivesAreStampedAndReproducible builds the host's archive
// twice, once through `make release`, once through the script, and checks
// both are byte-identical, and the binary inside reports the tag.
func TestReleaseArchivesAreStampedAndReproducible(t *testing.T) {
	t.Parallel() // builds and promtool runs dominate the package's time; overlap them
	if testing.Short() {
		t.Skip("-short: not building release archives")
	}
	for _, name := range []string{"git", "make", "tar", "gzip", "sha256sum"} {
		tool(t, name)
	}
	platform := runtime.GOOS + "/" + runtime.GOARCH
	const version = "v0.0.0-test"
	dist1, dist2 := t.TempDir(), t.TempDir()
	run(t, "..", "make", "release", "VERSION="+version, "PLATFORMS="+platform, "DIST="+dist1)
	cmd := exec.Command("../scripts/release.sh")
	cmd.Env = append(os.Environ(), "VERSION="+version, "PLATFORMS="+platform, "DIST="+dist2)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release.sh: %v\n%s", err, out)
	}

	archive := "router-" + version + "." + runtime.GOOS + "-" + runtime.GOARCH + ".tar.gz"
	sums1, err := os.ReadFile(filepath.Join(dist1, "sha256sums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sums2, err := os.ReadFile(filepath.Join(dist2, "sha256sums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(sums1, []byte("  "+archive+"\n")) {
		t.Fatalf("sha256sums.txt = %q, want a line for %s", sums1, archive)
	}
	if !bytes.Equal(sums1, sums2) {
		t.Errorf("two builds of one commit differ:\n%s\n%s", sums1, sums2)
	}
	run(t, dist1, "sha256sum", "-c", "sha256sums.txt")

	// The archive: sorted entries with the commit's time, root-owned.
	commitTime, err := strconv.ParseInt(gitOutput(t, "log", "-1", "--format=%ct"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dist1, archive))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	dir := strings.TrimSuffix(archive, ".tar.gz")
	bin := filepath.Join(t.TempDir(), "router")
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if !h.ModTime.Equal(time.Unix(commitTime, 0)) || h.Uid != 0 || h.Gid != 0 {
			t.Errorf("%s: mtime %s uid %d gid %d, want the commit time %s and root", h.Name, h.ModTime.UTC(), h.Uid, h.Gid, time.Unix(commitTime, 0).UTC())
		}
		if h.Name == dir+"/router" {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(bin, b, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := []string{dir + "/", dir + "/CHANGELOG.md", dir + "/LICENSE", dir + "/README.md", dir + "/router"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("archive entries = %v, want %v", names, want)
	}

	v := string(run(t, "", bin, "version"))
	date := time.Unix(commitTime, 0).UTC().Format("20060102-15:04:05")
	for _, w := range []string{"router, version " + version + " ", "revision: " + gitOutput(t, "rev-parse", "HEAD") + ")", "build date:       " + date} {
		if !strings.Contains(v, w) {
			t.Errorf("`router version` of the release = %q, want %q", v, w)
		}
	}
}
