func f() {
	x := 1   
	return x
}
