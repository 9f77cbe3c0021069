-- TPC-C schema (TPC-C v5.11 clause 1.3) for SQLite: the same columns as
-- pg_tpcc_schema.sql. Keys are unique indexes built after the load (tpcc::KEYS).
CREATE TABLE warehouse (w_id integer NOT NULL, w_name text, w_street_1 text, w_street_2 text, w_city text, w_state text, w_zip text, w_tax numeric, w_ytd numeric);
CREATE TABLE district (d_id integer NOT NULL, d_w_id integer NOT NULL, d_name text, d_street_1 text, d_street_2 text, d_city text, d_state text, d_zip text, d_tax numeric, d_ytd numeric, d_next_o_id integer);
CREATE TABLE customer (c_id integer NOT NULL, c_d_id integer NOT NULL, c_w_id integer NOT NULL, c_first text, c_middle text, c_last text, c_street_1 text, c_street_2 text, c_city text, c_state text, c_zip text, c_phone text, c_since text, c_credit text, c_credit_lim numeric, c_discount numeric, c_balance numeric, c_ytd_payment numeric, c_payment_cnt integer, c_delivery_cnt integer, c_data text);
CREATE TABLE history (h_c_id integer, h_c_d_id integer, h_c_w_id integer, h_d_id integer, h_w_id integer, h_date text, h_amount numeric, h_data text);
CREATE TABLE new_order (no_o_id integer NOT NULL, no_d_id integer NOT NULL, no_w_id integer NOT NULL);
CREATE TABLE orders (o_id integer NOT NULL, o_d_id integer NOT NULL, o_w_id integer NOT NULL, o_c_id integer, o_entry_d text, o_carrier_id integer, o_ol_cnt integer, o_all_local integer);
CREATE TABLE order_line (ol_o_id integer NOT NULL, ol_d_id integer NOT NULL, ol_w_id integer NOT NULL, ol_number integer NOT NULL, ol_i_id integer, ol_supply_w_id integer, ol_delivery_d text, ol_quantity integer, ol_amount numeric, ol_dist_info text);
CREATE TABLE item (i_id integer NOT NULL, i_im_id integer, i_name text, i_price numeric, i_data text);
CREATE TABLE stock (s_i_id integer NOT NULL, s_w_id integer NOT NULL, s_quantity integer, s_dist_01 text, s_dist_02 text, s_dist_03 text, s_dist_04 text, s_dist_05 text, s_dist_06 text, s_dist_07 text, s_dist_08 text, s_dist_09 text, s_dist_10 text, s_ytd integer, s_order_cnt integer, s_remote_cnt integer, s_data text);
