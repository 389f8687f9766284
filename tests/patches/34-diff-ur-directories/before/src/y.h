#define Y 1
