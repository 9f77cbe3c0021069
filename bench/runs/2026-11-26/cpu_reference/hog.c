#include <stdlib.h>
#include <stdint.h>
int main(int argc,char**argv){ size_t mb=argc>1?atoi(argv[1]):64; size_t n=(mb<<20)/8; uint64_t*a=malloc(n*8); uint64_t x=1;
 for(size_t i=0;i<n;i++)a[i]=i;
 for(;;){ for(int k=0;k<1000000;k++){x^=x<<13;x^=x>>7;x^=x<<17;a[x%n]+=k;} }
}
