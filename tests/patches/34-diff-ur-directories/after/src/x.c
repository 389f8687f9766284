int x = 10;
int y = 2;
