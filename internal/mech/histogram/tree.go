package histogram

// dawaTree is the hierarchical strategy template of DAWA's stage 2 (paper
// §4.3) over k leaves (the buckets, or the bins for H2 and Greedy-H): a
// tree of interval queries with branching factor t whose leaves are the
// single buckets and whose root is all of them. It depends only on k and t,
// never on data.
//
// Shape (the authors' code, digest §3.3): a node of s > t leaves has
// t - (s mod t) children of ⌊s/t⌋ leaves followed by s mod t children of
// ⌊s/t⌋+1; a node of 2 ≤ s ≤ t leaves has s single-leaf children.
//
// Nodes are numbered breadth first, so the root is 0, every parent precedes
// its children, the children of a node are consecutive, and walking the
// indices downwards visits children before parents.
type dawaTree struct {
	// lo[q], hi[q]: node q covers leaves [lo, hi).
	lo, hi []int
	// child[q] is q's first child and children[q] their number (0 for a leaf).
	child, children []int
	// depth[q]: the root has depth 0.
	depth []int
}

// newDawaTree builds the template over k ≥ 1 leaves with branching t ≥ 2.
func newDawaTree(k, t int) *dawaTree {
	tr := &dawaTree{}
	tr.add(0, k, 0)
	for q := 0; q < len(tr.lo); q++ {
		s := tr.hi[q] - tr.lo[q]
		if s == 1 {
			continue
		}
		tr.child[q], tr.children[q] = len(tr.lo), min(s, t)
		if s <= t {
			for i := range s {
				tr.add(tr.lo[q]+i, tr.lo[q]+i+1, tr.depth[q]+1)
			}
			continue
		}
		small, bigger := s/t, s%t
		at := tr.lo[q]
		for i := range t {
			size := small
			if i >= t-bigger {
				size++
			}
			tr.add(at, at+size, tr.depth[q]+1)
			at += size
		}
	}
	return tr
}

// add appends a node covering leaves [lo, hi) at the given depth.
func (tr *dawaTree) add(lo, hi, depth int) {
	tr.lo = append(tr.lo, lo)
	tr.hi = append(tr.hi, hi)
	tr.child = append(tr.child, 0)
	tr.children = append(tr.children, 0)
	tr.depth = append(tr.depth, depth)
}

// size returns the number of nodes.
func (tr *dawaTree) size() int { return len(tr.lo) }

// isLeaf reports whether node q is a single leaf.
func (tr *dawaTree) isLeaf(q int) bool { return tr.children[q] == 0 }

// height returns the largest number of nodes on a root-to-leaf path: the
// most measurements one leaf takes part in when every node is measured.
func (tr *dawaTree) height() int {
	h := 0
	for _, d := range tr.depth {
		h = max(h, d+1)
	}
	return h
}
