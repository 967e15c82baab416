// Package fuzzseed reads seed corpora for fuzz targets from the golden files
// under testdata/queries. It is imported by tests only.
package fuzzseed

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Inputs returns the input block of every test case in the datadriven
// files under dir (a command line, then input lines up to "----"),
// without duplicates. A dir that cannot be read yields nothing: a seed
// corpus is a help, not a requirement.
func Inputs(dir string) []string {
	seen := map[string]bool{}
	var out []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		for _, in := range inputsOf(string(data)) {
			if !seen[in] {
				seen[in] = true
				out = append(out, in)
			}
		}
		return nil
	})
	return out
}

// inputsOf splits one datadriven file: a case is a command line, input
// lines, "----", output lines, and a blank line.
func inputsOf(text string) []string {
	var out []string
	var block []string
	inOutput := false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case inOutput:
			if line == "" {
				inOutput = false
			}
		case line == "----":
			if len(block) > 1 {
				out = append(out, strings.Join(block[1:], "\n"))
			}
			block, inOutput = nil, true
		case line == "" || strings.HasPrefix(line, "#"):
			if len(block) == 0 {
				continue
			}
			block = append(block, line)
		default:
			block = append(block, line)
		}
	}
	return out
}
