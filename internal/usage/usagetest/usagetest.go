// Package usagetest lets a package's tests read its errors as the command
// line shows them, so that they can check the flags a message names.
package usagetest

import "github.com/pacer-load/pacer/internal/usage"

// CLI is err's message with its settings spelt as cmd/pacer spells them:
// -c, --rate. A nil err is "".
func CLI(err error) string {
	if err == nil {
		return ""
	}
	return usage.Render(err, func(name string) string {
		if len(name) == 1 {
			return "-" + name
		}
		return "--" + name
	})
}
