/* A first timing of hyblas batched DGEMM against a loop of cblas_dgemm calls (not the issue-48
 * benchmark, which also runs OpenBLAS and MKL): best of 7, square n, `count` products.
 *   gcc -O2 -Iinclude lab/batch-timing/bt.c -o bt target/release/libhyblas.so && ./bt 8 10000 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <cblas.h>
static double now(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+t.tv_nsec*1e-9;}
int main(int argc,char**argv){
  int n=atoi(argv[1]), count=atoi(argv[2]);
  size_t e=(size_t)n*n;
  double *a=malloc(e*count*8),*b=malloc(e*count*8),*c=malloc(e*count*8);
  for(size_t i=0;i<e*count;i++){a[i]=(double)rand()/RAND_MAX;b[i]=(double)rand()/RAND_MAX;c[i]=0;}
  const double **ap=malloc(count*sizeof*ap),**bp=malloc(count*sizeof*bp); double **cp=malloc(count*sizeof*cp);
  for(int p=0;p<count;p++){ap[p]=a+p*e;bp[p]=b+p*e;cp[p]=c+p*e;}
  CBLAS_TRANSPOSE t=CblasNoTrans; double al=1,be=0; int gs=count;
  double best_loop=1e9,best_batch=1e9,best_str=1e9;
  for(int r=0;r<7;r++){
    double t0=now();
    for(int p=0;p<count;p++) cblas_dgemm(CblasColMajor,t,t,n,n,n,1.0,ap[p],n,bp[p],n,0.0,cp[p],n);
    double t1=now();
    cblas_dgemm_batch(CblasColMajor,&t,&t,&n,&n,&n,&al,ap,&n,bp,&n,&be,cp,&n,1,&gs);
    double t2=now();
    cblas_dgemm_batch_strided(CblasColMajor,t,t,n,n,n,1.0,a,n,(int)e,b,n,(int)e,0.0,c,n,(int)e,count);
    double t3=now();
    if(t1-t0<best_loop)best_loop=t1-t0; if(t2-t1<best_batch)best_batch=t2-t1; if(t3-t2<best_str)best_str=t3-t2;
  }
  printf("n=%d count=%d loop %.3f ms batch %.3f ms (%.2fx) strided %.3f ms (%.2fx)\n",n,count,best_loop*1e3,best_batch*1e3,best_loop/best_batch,best_str*1e3,best_loop/best_str);
  return 0;
}
