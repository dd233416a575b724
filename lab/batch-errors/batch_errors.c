/* Bad arguments of cblas_dgemm_batch / cblas_dgemm_batch_strided, one per case (argv[1]), on two
 * groups of one 2x2x2 product each (C's first element 7 = untouched). Built against oneMKL (ILP64
 * through MKL_INTERFACE_LAYER) or OpenBLAS (scipy_ prefix, 32-bit ints) by run.sh beside it.
 * Cases: 1 group_count -1; 2 group_size[0] -1; 3 transa[0] 999; 4 m[0] -1; 5 lda[1] 1; 6 ldc[1] 1;
 * 7 k[1] -1; 8 group_size[1] -1; 9 layout 5; 10 transb[1] 999; 11 n[1] -1; 12 ldb[1] 1;
 * 13 group_count 0; 14 every group_size 0; 15 m[0] 3 with lda 2 (bad column-major, fine
 * row-major); 16 group_size[1] 0 with lda[1] 1; 17 ldc[0] 1 and m[1] -1; 18 group_size[1] 0 with
 * transa[1] 999; 19 group_size[0] -1 and m[1] -1; 20 group_count -1 and m[0] -1; strided: 101 batch -1; 102 stridea 1; 103 stridec 1; 104 lda 1; 105 m -1;
 * 106 strideb 1. ROW=1: row-major. */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
typedef enum {RowMajor=101, ColMajor=102} L; typedef enum {NoT=111, T=112, CT=113} Tr;
void cblas_dgemm_batch(L, const Tr*, const Tr*, const long long*, const long long*, const long long*, const double*, const double**, const long long*, const double**, const long long*, const double*, double**, const long long*, long long, const long long*);
void cblas_dgemm_batch_strided(L, Tr, Tr, long long, long long, long long, double, const double*, long long, long long, const double*, long long, long long, double, double*, long long, long long, long long);
void dgemm_batch_(const char*, const char*, const long long*, const long long*, const long long*, const double*, const double**, const long long*, const double**, const long long*, const double*, double**, const long long*, const long long*, const long long*);
int main(int argc, char** argv) {
  double a[64], b[64], c0[64], c1[64];
  for (int i=0;i<64;i++){a[i]=1;b[i]=1;c0[i]=7;c1[i]=7;}
  const double *ap[2]={a,a}, *bp[2]={b,b}; double *cp[2]={c0,c1};
  Tr ta[2]={NoT,NoT}, tb[2]={NoT,NoT};
  long long m[2]={2,2}, n[2]={2,2}, k[2]={2,2}, lda[2]={2,2}, ldb[2]={2,2}, ldc[2]={2,2}, gs[2]={1,1};
  double al[2]={1,1}, be[2]={0,0};
  int cs = atoi(argv[1]);
  L lay = (getenv("ROW") ? RowMajor : ColMajor); long long gc = 2;
  switch(cs){
    case 1: gc=-1; break;
    case 2: gs[0]=-1; break;
    case 3: ta[0]=999; break;
    case 4: m[0]=-1; break;
    case 5: lda[1]=1; break;     /* group 1 bad lda */
    case 6: ldc[1]=1; break;
    case 7: k[1]=-1; break;
    case 8: gs[1]=-1; break;
    case 9: lay=5; break;
    case 10: tb[1]=999; break;
    case 11: n[1]=-1; break;
    case 12: ldb[1]=1; break;
    case 13: gc=0; break;
    case 14: gs[0]=0; gs[1]=0; break;
    case 15: lda[0]=2; m[0]=3; break;
    case 16: gs[1]=0; lda[1]=1; break;
    case 17: ldc[0]=1; m[1]=-1; break;
    case 18: gs[1]=0; ta[1]=999; break;
    case 19: gs[0]=-1; m[1]=-1; break;
    case 20: gc=-1; m[0]=-1; break;
  }
  printf("case %d\n", cs); fflush(stdout);
  if (cs < 100) cblas_dgemm_batch(lay, ta, tb, m, n, k, al, ap, lda, bp, ldb, be, cp, ldc, gc, gs);
  else {
    long long M=2,N=2,K=2,LDA=2,LDB=2,LDC=2,SA=4,SB=4,SC=4,BS=2;
    if (cs==101) BS=-1; if (cs==102) SA=1; if (cs==103) SC=1; if (cs==104) LDA=1; if(cs==105) M=-1; if (cs==106) SB=1;
    cblas_dgemm_batch_strided(ColMajor, NoT, NoT, M,N,K, 1.0, a, LDA, SA, b, LDB, SB, 0.0, c0, LDC, SC, BS);
  }
  fflush(stdout);
  printf("c0[0]=%g c1[0]=%g\n", c0[0], c1[0]);
  return 0;
}
