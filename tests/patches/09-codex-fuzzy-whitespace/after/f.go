func f() {
	x := 2
	return x
}
