package kit

import (
	"os"
	"os/exec"
)

// RunResult runs a pacer command that writes its result document to path
// (its stderr passed through) and returns that document. Exit status 4
// (generator_behind) still wrote a result and is no error.
func RunResult(cmd *exec.Cmd, path string) ([]byte, error) {
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 4 {
			return nil, err
		}
	}
	return os.ReadFile(path)
}
