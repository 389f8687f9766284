header 1
header 2
header 3
int f1(void) { return 1; }
int f2(void) { return 2; }
int f3(void) { return 3; }
int f4(void) { return 4; }
int f5(void) { return 5; }
int f6(void) { return 6; }
int f7(void) { return 7; }
int f8(void) { return 8; }
int f9(void) { return 9; }
int f10(void) { return 10; }
int f11(void) { return 11; }
int f12(void) { return 12; }
int f13(void) { return 13; }
int f14(void) { return 14; }
int f15(void) { return 15; }
int f16(void) { return 16; }
int f17(void) { return 17; }
int f18(void) { return 18; }
int f19(void) { return 19; }
int f20(void) { return 20; }
int f21(void) { return 21; }
int f22(void) { return 22; }
int f23(void) { return 23; }
int f24(void) { return 24; }
int f25(void) { return 25; }
int f26(void) { return 26; }
int f27(void) { return 27; }
int f28(void) { return 28; }
int f29(void) { return 29; }
int f30(void) { return 30; }
